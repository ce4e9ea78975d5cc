package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// echoPair is a TCP connection to a server that echoes what it reads.
func echoPair(t *testing.T) net.Conn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		_, _ = io.Copy(s, s)
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// TestWrapEchoes: a wrapped TCP connection is raw (on Linux), writes a
// megabyte whole while another goroutine reads it back (a read and a
// write at once, as gRPC's transport does), honours a read deadline, and
// reads io.EOF once the peer is gone.
func TestWrapEchoes(t *testing.T) {
	nc := echoPair(t)
	c := Wrap(nc)
	if _, raw := c.(*conn); raw != (runtime.GOOS == "linux") {
		t.Fatalf("raw I/O %v on %s", raw, runtime.GOOS)
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(want))
		n, _ := io.ReadFull(c, b)
		got <- b[:n]
	}()
	if n, err := c.Write(want); err != nil || n != len(want) {
		t.Fatalf("write: %d of %d, %v", n, len(want), err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("echoed %d bytes, not the %d written", len(b), len(want))
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	if err := nc.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(make([]byte, 8)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("after the peer's end: %d, %v", n, err)
	}
}

// TestWrapKeepsOthers: a connection with no descriptor is returned as is.
func TestWrapKeepsOthers(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Wrap(a) != a {
		t.Error("a pipe was wrapped")
	}
}
