package resilience

import (
	"bufio"
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

// tcpSink writes JSON lines to a TCP connection. A failed write is retried
// on a new connection (which starts with hello again) a few times; after
// that the sink gives up and every later write fails at once.
type tcpSink struct {
	addr    string
	hello   []byte
	conn    net.Conn
	dead    bool
	timeout time.Duration // per dial and per write
	retries int
	backoff time.Duration
}

func dialTCP(addr string, hello []byte, startWait time.Duration) (*tcpSink, error) {
	s := &tcpSink{addr: addr, hello: hello, timeout: 5 * time.Second, retries: 3, backoff: 250 * time.Millisecond}
	deadline := time.Now().Add(startWait)
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = s.connect(); err == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("resilience output: connect to tcp://%s (want a listening harness on HOST:PORT): %w", addr, err)
}

func (s *tcpSink) connect() error {
	c, err := net.DialTimeout("tcp", s.addr, s.timeout)
	if err != nil {
		return err
	}
	s.conn = c
	if err := s.send(s.hello); err != nil {
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
		return fmt.Errorf("resilience output: tcp://%s gave up after %d reconnects", s.addr, s.retries)
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
			continue
		}
		if err = s.send(line); err == nil {
			return nil
		}
		_ = s.conn.Close()
		s.conn = nil
	}
	s.dead = true
	return fmt.Errorf("resilience output: write to tcp://%s failed after %d reconnects: %w", s.addr, s.retries, err)
}

func (s *tcpSink) close() error {
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	return err
}

func (s *tcpSink) String() string { return "tcp://" + s.addr }
