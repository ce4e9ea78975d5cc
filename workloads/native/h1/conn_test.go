package h1

import (
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
)

// TestConnIO: a TCP connection reads and writes with raw calls (rawio, on
// Linux), any other net.Conn with its own Read and Write; both read an
// answer's head and the peer's end of stream as io.EOF, and write a
// megabyte whole.
func TestConnIO(t *testing.T) {
	tcp := func(t *testing.T) (net.Conn, net.Conn) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		a, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		b, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
	pipe := func(*testing.T) (net.Conn, net.Conn) { return net.Pipe() }
	for _, tc := range []struct {
		name    string
		pair    func(*testing.T) (net.Conn, net.Conn)
		wantRaw bool
	}{{"tcp", tcp, runtime.GOOS == "linux"}, {"pipe", pipe, false}} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tc.pair(t)
			defer a.Close()
			c := newConn(b, 64)
			if raw := c.nc != b; raw != tc.wantRaw {
				t.Fatalf("raw I/O %v, want %v", raw, tc.wantRaw)
			}
			big := make([]byte, 1<<20)
			got := make(chan int, 1)
			go func() {
				n, _ := io.Copy(io.Discard, io.LimitReader(a, int64(len(big))))
				got <- int(n)
				_, _ = a.Write([]byte("HTTP/1.1 200 OK\r\n\r\n"))
				a.Close()
			}()
			if err := c.write(big); err != nil {
				t.Fatalf("write: %v", err)
			}
			if n := <-got; n != len(big) {
				t.Fatalf("the peer read %d bytes of %d", n, len(big))
			}
			head, err := c.readHead()
			if err != nil || string(head) != "HTTP/1.1 200 OK\r\n" {
				t.Fatalf("head %q, %v", head, err)
			}
			if err := c.fill(); !errors.Is(err, io.EOF) {
				t.Fatalf("after the peer closed: %v, want io.EOF", err)
			}
		})
	}
}
