package testbed

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/scenario"
)

// ping sends a Redis PING and reports whether +PONG came back in time.
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(300 * time.Millisecond)) //nolint:errcheck
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 7)
	n, _ := c.Read(buf)
	return string(buf[:n]) == "+PONG\r\n"
}

// TestLocalPauseFreezesTheProcess pauses a real redis-server started as a
// command: it stops answering, then answers again after unpause.
func TestLocalPauseFreezesTheProcess(t *testing.T) {
	testenv.Tool(t, "redis-server", "redis-server")
	l := &Local{LogDir: t.TempDir()}
	svc := &scenario.Service{Command: []string{"redis-server", "--port", "{port}", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"},
		Health: scenario.Health{Check: scenario.HealthTCP}}
	l.ReadyTimeout = 5 * time.Second
	p, err := l.commandInstance(context.Background(), "cache", svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Down(context.Background()) //nolint:errcheck
	deadline := time.Now().Add(5 * time.Second)
	for !ping(p.addr) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	h := l.Hosts()
	ctx := context.Background()
	if err := h.Pause(ctx, "cache"); err != nil {
		t.Fatal(err)
	}
	if ping(p.addr) {
		t.Error("a paused redis-server still answers")
	}
	if err := h.Unpause(ctx, "cache"); err != nil {
		t.Fatal(err)
	}
	if !ping(p.addr) {
		t.Error("redis-server does not answer after unpause")
	}
	for _, f := range []func(context.Context, string) error{h.Stop, h.Kill, h.Disconnect} {
		if err := f(ctx, "cache"); !errors.Is(err, errLocalHost) {
			t.Errorf("local host fault: got %v, want %v", err, errLocalHost)
		}
	}
	if err := h.Pause(ctx, "nothing"); err == nil {
		t.Error("pausing an unknown instance succeeded")
	}
}
