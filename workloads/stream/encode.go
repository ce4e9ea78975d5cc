package stream

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/chaosrun/chaosrun/models/wire"
	"github.com/chaosrun/chaosrun/record"
)

// Writer writes a results stream, as the xk6-resilience output does: a
// hello line, one line per window, an end line. A load engine other than
// k6 writes its windows with it, so that the receiver cannot tell them apart.
// Not safe for concurrent use.
type Writer struct {
	w    *bufio.Writer
	c    io.Closer
	conn net.Conn // set for a TCP stream: writes get a deadline
}

// writeTimeout bounds one write to a TCP receiver.
const writeTimeout = 10 * time.Second

// helloOf is the hello line of a stream; token is for a TCP stream only.
func helloOf(h Hello, token string) wire.Hello {
	return wire.Hello{Type: wire.TypeHello, Version: WireVersion, K6: h.K6, Extension: h.Extension, Shard: h.Shard, Token: token}
}

// NewWriter starts a stream on w with hello (its Version is set here).
func NewWriter(w io.Writer, hello Hello) (*Writer, error) {
	sw := &Writer{w: bufio.NewWriterSize(w, 64<<10)}
	if c, ok := w.(io.Closer); ok {
		sw.c = c
	}
	if err := sw.line(helloOf(hello, "")); err != nil {
		return nil, err
	}
	return sw, nil
}

// Create starts a stream in a new file at path.
func Create(path string, hello Hello) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("results stream: %w", err)
	}
	w, err := NewWriter(f, hello)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return w, nil
}

// DialConfig says how to reach a receiver.
type DialConfig struct {
	// Addr is the receiver's host:port.
	Addr string
	// Token is the run's token; with one, the receiver's answer is awaited.
	Token string
	// TLS, when set, makes the connection TLS.
	TLS *tls.Config
	// Wait is how long to keep trying to connect; default 3 s.
	Wait time.Duration
}

// Dial connects to a receiver and sends hello, retrying until cfg.Wait
// passes; a receiver that refuses the hello is not retried.
func Dial(ctx context.Context, cfg DialConfig, hello Hello) (*Writer, error) {
	wait := cfg.Wait
	if wait <= 0 {
		wait = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		w, err := dialOnce(ctx, cfg, hello)
		if err == nil {
			return w, nil
		}
		var refused *refusedByReceiver
		if errors.As(err, &refused) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("results stream: connect to %s: %w", cfg.Addr, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// refusedByReceiver is the receiver turning the stream away.
type refusedByReceiver struct{ reason string }

func (e *refusedByReceiver) Error() string { return "the receiver refused the stream: " + e.reason }

func dialOnce(ctx context.Context, cfg DialConfig, hello Hello) (*Writer, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	var c net.Conn
	var err error
	if cfg.TLS != nil {
		c, err = (&tls.Dialer{NetDialer: d, Config: cfg.TLS}).DialContext(ctx, "tcp", cfg.Addr)
	} else {
		c, err = d.DialContext(ctx, "tcp", cfg.Addr)
	}
	if err != nil {
		return nil, err
	}
	w := &Writer{w: bufio.NewWriterSize(c, 64<<10), c: c, conn: c}
	err = w.line(helloOf(hello, cfg.Token))
	if err == nil && cfg.Token != "" {
		err = awaitWelcome(c)
	}
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return w, nil
}

// awaitWelcome reads the receiver's answer to a hello with a token.
func awaitWelcome(c net.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(replyTimeout + DefaultHelloTimeout))
	defer c.SetReadDeadline(time.Time{}) //nolint:errcheck // best effort
	line, err := bufio.NewReaderSize(c, 4<<10).ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("no answer to hello: %w", err)
	}
	var r wire.Answer
	if err := json.Unmarshal(line, &r); err != nil {
		return fmt.Errorf("unreadable answer to hello %q: %w", line, err)
	}
	switch r.Type {
	case wire.TypeWelcome:
		return nil
	case wire.TypeRefused:
		return &refusedByReceiver{reason: r.Error}
	}
	return fmt.Errorf("unexpected answer to hello: %q", line)
}

// line writes one message; a TCP stream sends it at once.
func (w *Writer) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("results stream: encode: %w", err)
	}
	if w.conn != nil {
		_ = w.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	}
	if _, err := w.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("results stream: write: %w", err)
	}
	if w.conn != nil {
		if err := w.w.Flush(); err != nil {
			return fmt.Errorf("results stream: write: %w", err)
		}
	}
	return nil
}

// Window writes one window.
func (w *Writer) Window(win record.Window) error {
	return w.line(wire.Window{Type: wire.TypeWindow, Start: wire.FormatStart(win.Start), Series: toWire(win.Series)})
}

// End writes the end line with the count of samples the writer's owner
// could not aggregate, and closes the stream.
func (w *Writer) End(dropped int64) error {
	err := w.line(wire.End{Type: wire.TypeEnd, Dropped: dropped})
	return errors.Join(err, w.Close())
}

// Close flushes and closes the stream without an end line (a stream cut short).
func (w *Writer) Close() error {
	err := w.w.Flush()
	if w.c != nil {
		err = errors.Join(err, w.c.Close())
		w.c = nil
	}
	return err
}
