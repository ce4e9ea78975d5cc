// Package relay forwards TCP connections, unchanged, from addresses it
// listens on to others: on the Docker testbed it holds a replicated
// dependency's name, one relay per replica, so that the name resolves to
// every replica's edge (Docker's DNS answers with every container holding
// an alias on a network) while each replica keeps a proxy of its own.
package relay

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// Pair is one address to listen on and where to forward what arrives.
type Pair struct{ Listen, Target string }

// Main is `chaosrun serve relay --pair LISTEN=TARGET …`: it forwards until
// ctx ends.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var pairs []Pair
	fs.Func("pair", "LISTEN=TARGET: forward connections to LISTEN on to TARGET (repeatable)", func(v string) error {
		l, t, ok := strings.Cut(v, "=")
		if !ok || l == "" || t == "" {
			return fmt.Errorf("%q is not LISTEN=TARGET", v)
		}
		pairs = append(pairs, Pair{l, t})
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(pairs) == 0 {
		return errors.New("relay: no --pair LISTEN=TARGET")
	}
	return Serve(ctx, pairs, stdout)
}

// Serve listens on every pair's address and forwards each connection to
// its target until ctx ends.
func Serve(ctx context.Context, pairs []Pair, stdout io.Writer) error {
	var lns []net.Listener
	for _, p := range pairs {
		ln, err := net.Listen("tcp", p.Listen)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return fmt.Errorf("relay: listen %s: %w", p.Listen, err)
		}
		lns = append(lns, ln)
		fmt.Fprintf(stdout, "relay: %s → %s\n", ln.Addr(), p.Target)
	}
	var wg sync.WaitGroup
	for i, ln := range lns {
		wg.Go(func() { accept(ctx, ln, pairs[i].Target, &wg) })
	}
	<-ctx.Done()
	for _, ln := range lns {
		ln.Close()
	}
	wg.Wait()
	return nil
}

// accept forwards each connection ln accepts to target.
func accept(ctx context.Context, ln net.Listener, target string, wg *sync.WaitGroup) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		wg.Go(func() { forward(ctx, c, target) })
	}
}

// forward copies both ways between c and a connection to target, closing
// each side's writes when the other's reads end.
func forward(ctx context.Context, c net.Conn, target string) {
	defer c.Close()
	d := net.Dialer{Timeout: 5 * time.Second}
	up, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return
	}
	defer up.Close()
	stop := context.AfterFunc(ctx, func() { c.Close(); up.Close() })
	defer stop()
	done := make(chan struct{})
	go func() {
		io.Copy(up, c) //nolint:errcheck // a closed side ends the copy
		closeWrite(up)
		close(done)
	}()
	io.Copy(c, up) //nolint:errcheck // a closed side ends the copy
	closeWrite(c)
	<-done
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite() //nolint:errcheck // the peer may be gone
	}
}
