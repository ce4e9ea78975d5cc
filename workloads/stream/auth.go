package stream

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/chaosrun/chaosrun/guard"
)

// Bounds on a connection that has not yet shown the run's token.
const (
	// helloTimeout is how long a connection has to send its hello.
	helloTimeout = 10 * time.Second
	// readBuf is the line reader's buffer; a hello must fit in it.
	readBuf = 64 << 10
	// maxPending bounds connections that have not yet been let in.
	maxPending = 64
	// replyTimeout bounds writing the answer to a hello.
	replyTimeout = 2 * time.Second
)

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

// ServerTLS loads a PEM certificate and key for a TLS receiver.
func ServerTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("results stream TLS: load %s and %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// helloAuth is the part of a hello that authenticates a connection.
type helloAuth struct {
	Type    string `json:"type"`
	Version int    `json:"version"`
	Token   string `json:"token"`
}

// reply is the receiver's one answer to a hello: welcome or refused.
type reply struct {
	Type  string `json:"type"`
	Error string `json:"error,omitempty"`
}

// readHello reads a connection's first line, which must be a hello that
// carries token, within helloTimeout and readBuf bytes. It returns the line
// (a copy) for the decoder.
func readHello(c net.Conn, br *bufio.Reader, token []byte) ([]byte, error) {
	_ = c.SetReadDeadline(time.Now().Add(helloTimeout))
	defer c.SetReadDeadline(time.Time{}) //nolint:errcheck // best effort
	line, err := br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, fmt.Errorf("its first line is longer than %d bytes; want a hello", readBuf)
	case isTimeout(err):
		return nil, fmt.Errorf("no hello within %s", helloTimeout)
	case err != nil && len(line) == 0:
		var rec tls.RecordHeaderError
		if errors.As(err, &rec) {
			return nil, fmt.Errorf("TLS handshake: %w (is the output's tls option on?)", err)
		}
		return nil, fmt.Errorf("no hello: %w", err)
	}
	var h helloAuth
	if jerr := json.Unmarshal(line, &h); jerr != nil || h.Type != "hello" {
		return nil, errors.New("its first message is not a hello")
	}
	if h.Version != WireVersion {
		return nil, fmt.Errorf("hello: wire version %d; this harness reads version %d", h.Version, WireVersion)
	}
	if h.Token == "" {
		return nil, errors.New("its hello has no token; this receiver needs the run's token (--out resilience=tcp://HOST:PORT?token=TOKEN, or K6_RESILIENCE_TOKEN)")
	}
	if !guard.TokenMatches(h.Token, string(token)) {
		return nil, errors.New("wrong token in its hello")
	}
	return append([]byte(nil), line...), nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// answer writes the receiver's reply to a hello; a peer that does not
// read it is not harmed.
func answer(c net.Conn, refusal error) {
	r := reply{Type: "welcome"}
	if refusal != nil {
		r = reply{Type: "refused", Error: refusal.Error()}
	}
	b, _ := json.Marshal(r)
	_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
	_, _ = c.Write(append(b, '\n'))
	_ = c.SetWriteDeadline(time.Time{})
}

// wantsAnswer reports whether a line is a hello that carries a token: its
// sender waits for the receiver's answer.
func wantsAnswer(line []byte) bool {
	var h helloAuth
	return json.Unmarshal(line, &h) == nil && h.Type == "hello" && h.Token != ""
}
