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
	"time"

	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/models/wire"
)

// Bounds on connections that have not yet shown a hello with the run's
// token. Such a connection costs a goroutine, a maxHello buffer and a file
// descriptor; the run's own shards send their hello at once, so a slot is
// never held for long by them. When a bound is reached, the oldest waiting
// connection is dropped (closed without an answer, which the output takes
// as a reason to reconnect) instead of the newcomer being refused: whoever
// holds connections open without a hello cannot keep a shard out.
const (
	// DefaultHelloTimeout is how long a connection has to finish its TLS
	// handshake and send its hello (Config.HelloTimeout).
	DefaultHelloTimeout = 5 * time.Second
	// maxHello is the longest first line; a hello is about 200 bytes.
	maxHello = 4 << 10
	// maxPending bounds the connections waiting for their hello, in total.
	maxPending = 128
	// maxPendingPerSource bounds them per source address, so that one
	// source's flood drops its own connections, not others'.
	maxPendingPerSource = 32
	// replyTimeout bounds writing the answer to a hello.
	replyTimeout = 2 * time.Second
)

// handoverWait is how long a second stream waits for the first one to end
// (the output reconnects after a write failed) before it is refused; a
// variable for tests.
var handoverWait = time.Second

// readBuf is the line reader's buffer.
const readBuf = 64 << 10

// Why connections are refused, as Summary.RefusedByReason counts them.
const (
	reasonDropped  = "dropped while waiting, too many waiting"
	reasonNoHello  = "no hello"
	reasonNotHello = "first line not a hello"
	reasonToken    = "no or wrong token"
	reasonVersion  = "other wire version"
	reasonTLS      = "TLS handshake failed"
	reasonSecond   = "second stream"
	reasonAfterEnd = "stream after the end"
	reasonClosing  = "receiver closing"
	reasonAccept   = "accept failed"
)

// refusal is why a connection was turned away: a reason (one of the
// reason constants) and the details.
type refusal struct {
	reason string
	err    error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

func refuseAs(reason string, format string, a ...any) *refusal {
	return &refusal{reason: reason, err: fmt.Errorf(format, a...)}
}

// NewToken returns a fresh random token for a run's results stream.
func NewToken() string { return guard.NewToken() }

// IsLoopback reports whether a listen address binds loopback only ("" is
// the default 127.0.0.1 with a free port).
func IsLoopback(addr string) bool {
	if addr == "" {
		return true
	}
	return guard.IsLoopbackListen(addr)
}

// ServerTLS loads a PEM certificate and key for a TLS receiver, each at
// most workdir.MaxSmall bytes; it gives up when ctx ends.
func ServerTLS(ctx context.Context, certFile, keyFile string) (*tls.Config, error) {
	var pems [2][]byte
	var err error
	for i, f := range []string{certFile, keyFile} {
		if pems[i], err = workdir.Read(ctx, f, workdir.MaxSmall, workdir.OS(f), io.ReadAll); err != nil {
			return nil, fmt.Errorf("results stream TLS: %w", err)
		}
	}
	cert, err := tls.X509KeyPair(pems[0], pems[1])
	if err != nil {
		return nil, fmt.Errorf("results stream TLS: load %s and %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// readHello reads a connection's first line, which must be a hello, within
// timeout and maxHello bytes; with a token, the hello must carry it. It
// returns the line (a copy) for the decoder, and whether its sender waits
// for an answer (its hello carries a token).
func readHello(c net.Conn, br *bufio.Reader, token []byte, timeout time.Duration) (line []byte, answers bool, _ *refusal) {
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	defer c.SetReadDeadline(time.Time{}) //nolint:errcheck // best effort
	line, err := br.ReadSlice('\n')
	if err != nil && len(line) == 0 && !errors.Is(err, bufio.ErrBufferFull) && !isTimeout(err) {
		return nil, false, noHello(c, err)
	}
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, false, refuseAs(reasonNotHello, "its first line is longer than %d bytes; want a hello", maxHello)
	case isTimeout(err):
		return nil, false, refuseAs(reasonNoHello, "no hello within %s", timeout)
	}
	var h wire.Hello
	if jerr := json.Unmarshal(line, &h); jerr != nil || h.Type != wire.TypeHello {
		return nil, false, refuseAs(reasonNotHello, "its first message is not a hello")
	}
	answers = h.Token != ""
	if h.Version != WireVersion {
		return nil, answers, refuseAs(reasonVersion, "hello: wire version %d; this harness reads version %d", h.Version, WireVersion)
	}
	if token != nil {
		if h.Token == "" {
			return nil, false, refuseAs(reasonToken, "its hello has no token; this receiver needs the run's token (--out resilience=tcp://HOST:PORT?token=TOKEN, or K6_RESILIENCE_TOKEN)")
		}
		if !guard.TokenMatches(h.Token, string(token)) {
			return nil, true, refuseAs(reasonToken, "wrong token in its hello")
		}
	}
	return append([]byte(nil), line...), answers, nil
}

// noHello says why a connection ended before its first line: a failed
// TLS handshake, or no hello at all.
func noHello(c net.Conn, err error) *refusal {
	var rec tls.RecordHeaderError
	if errors.As(err, &rec) {
		return refuseAs(reasonTLS, "TLS handshake: %w (is the output's tls option on?)", err)
	}
	if tc, ok := c.(*tls.Conn); ok && !tc.ConnectionState().HandshakeComplete && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		return refuseAs(reasonTLS, "TLS handshake: %w", err)
	}
	return refuseAs(reasonNoHello, "no hello: %w", err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// answer writes the receiver's answer to a hello (welcome or refused); a
// peer that does not read it is not harmed.
func answer(c net.Conn, refused error) {
	r := wire.Answer{Type: wire.TypeWelcome}
	if refused != nil {
		r = wire.Answer{Type: wire.TypeRefused, Error: refused.Error()}
	}
	b, _ := json.Marshal(r)
	_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
	_, _ = c.Write(append(b, '\n'))
	_ = c.SetWriteDeadline(time.Time{})
}
