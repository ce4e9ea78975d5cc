package relay

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestRelayForwardsBothWays: bytes sent through the relay reach the
// target and its answer comes back, for several connections at once; the
// relay ends with its context.
func TestRelayForwardsBothWays(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }() //nolint:errcheck // test echo
		}
	}()
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := front.Addr().String()
	front.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, []Pair{{addr, echo.Addr().String()}}, io.Discard) }()
	var c net.Conn
	for i := 0; i < 50 && c == nil; i++ {
		c, _ = net.Dial("tcp", addr)
		time.Sleep(20 * time.Millisecond)
	}
	if c == nil {
		t.Fatal("relay never listened")
	}
	for i := range 3 {
		msg := fmt.Sprintf("line %d\n", i)
		c.Write([]byte(msg)) //nolint:errcheck // read back below
		got, err := bufio.NewReader(io.LimitReader(c, int64(len(msg)))).ReadString('\n')
		if err != nil || got != msg {
			t.Fatalf("echo through the relay = %q, %v; want %q", got, err, msg)
		}
	}
	c.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("relay did not end with its context")
	}
}

func TestMainFlags(t *testing.T) {
	var stderr bytes.Buffer
	for _, args := range [][]string{nil, {"--pair", "nonsense"}} {
		err := Main(context.Background(), args, io.Discard, &stderr)
		if err == nil || !strings.Contains(err.Error()+stderr.String(), "LISTEN=TARGET") {
			t.Errorf("Main(%v) = %v, want an error naming LISTEN=TARGET", args, err)
		}
	}
}
