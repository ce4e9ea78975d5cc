package testenv

import (
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// GRPCExampleServer starts grpc-go's reflection example (Greeter.SayHello
// and Echo.UnaryEcho on one port, no chaosrun code in it; make
// grpc-example builds it) on a free loopback port, stopped at the test's
// end, and returns its address once it accepts connections.
func GRPCExampleServer(t testing.TB) string {
	t.Helper()
	bin := RepoTool(t, "grpc-example-server", "grpc-example")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("grpc-example-server does not accept on %s within 10s", addr)
		}
	}
}
