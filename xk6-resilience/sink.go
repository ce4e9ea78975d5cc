package resilience

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// sink receives the stream's lines, in order, from one goroutine.
type sink interface {
	// write sends one line (ending in '\n'); an error means the line is lost.
	write(line []byte) error
	close() error
	String() string
}

// fileSink writes JSON lines to a file.
type fileSink struct {
	path string
	f    *os.File
	w    *bufio.Writer
}

func openFile(path string, hello []byte) (*fileSink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("resilience output: create %s: %w", path, err)
	}
	s := &fileSink{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10)}
	if err := s.write(hello); err != nil {
		_ = f.Close()
		return nil, err
	}
	return s, nil
}

func (s *fileSink) write(line []byte) error {
	if _, err := s.w.Write(line); err != nil {
		return fmt.Errorf("resilience output: write %s: %w", s.path, err)
	}
	return nil
}

func (s *fileSink) close() error {
	ferr := s.w.Flush()
	cerr := s.f.Close()
	if err := errors.Join(ferr, cerr); err != nil {
		return fmt.Errorf("resilience output: close %s: %w", s.path, err)
	}
	return nil
}

func (s *fileSink) String() string { return s.path }

// tcpSink writes JSON lines to a TCP (or TLS) connection. A failed write
// is retried on a new connection (which starts with hello again) a few
// times; after that the sink gives up and every later write fails at once.
// A receiver that refuses the hello is not retried.
type tcpSink struct {
	tcpOptions
	hello   []byte
	conn    net.Conn
	dead    bool
	timeout time.Duration // per dial (TLS handshake included), per write and per answer
	retries int
	backoff time.Duration
}

func dialTCP(opts tcpOptions, hello []byte, startWait time.Duration) (*tcpSink, error) {
	s := &tcpSink{tcpOptions: opts, hello: hello, timeout: 5 * time.Second, retries: 3, backoff: 250 * time.Millisecond}
	deadline := time.Now().Add(startWait)
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = s.connect(); err == nil {
			return s, nil
		}
		if permanent(err) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("resilience output: connect to %s (want a listening harness on HOST:PORT): %w", s, err)
}

// permanent reports whether a connect error will not go away by retrying:
// the receiver refused the hello, or its certificate is not trusted.
func permanent(err error) bool {
	var refused *refusedError
	var cert *tls.CertificateVerificationError
	return errors.As(err, &refused) || errors.As(err, &cert)
}

func (s *tcpSink) connect() error {
	d := &net.Dialer{Timeout: s.timeout}
	var c net.Conn
	var err error
	if s.tls != nil {
		c, err = tls.DialWithDialer(d, "tcp", s.addr, s.tls)
	} else {
		c, err = d.Dial("tcp", s.addr)
	}
	if err != nil {
		return err
	}
	s.conn = c
	err = s.send(s.hello)
	if err == nil && s.awaitAnswer {
		err = readAnswer(c, s.timeout)
	}
	if err != nil {
		_ = c.Close()
		s.conn = nil
		return err
	}
	return nil
}

func (s *tcpSink) send(line []byte) error {
	_ = s.conn.SetWriteDeadline(time.Now().Add(s.timeout))
	_, err := s.conn.Write(line)
	return err
}

func (s *tcpSink) write(line []byte) error {
	if s.dead {
		return fmt.Errorf("resilience output: %s gave up after %d reconnects", s, s.retries)
	}
	if s.conn != nil {
		err := s.send(line)
		if err == nil {
			return nil
		}
		_ = s.conn.Close()
		s.conn = nil
	}
	var err error
	for i := 1; i <= s.retries; i++ {
		time.Sleep(time.Duration(i) * s.backoff)
		if err = s.connect(); err != nil {
			if permanent(err) {
				s.dead = true
				return fmt.Errorf("resilience output: %s: %w", s, err)
			}
			continue
		}
		if err = s.send(line); err == nil {
			return nil
		}
		_ = s.conn.Close()
		s.conn = nil
	}
	s.dead = true
	return fmt.Errorf("resilience output: write to %s failed after %d reconnects: %w", s, s.retries, err)
}

func (s *tcpSink) close() error {
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	return err
}

func (s *tcpSink) String() string {
	if s.tls != nil {
		return "tcp://" + s.addr + " (TLS)"
	}
	return "tcp://" + s.addr
}
