package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// closeGrace is how long Close lets open connections finish sending before
// it cuts them.
const closeGrace = 2 * time.Second

// Receiver accepts the output's TCP connections on 127.0.0.1 and merges
// what they send.
type Receiver struct {
	ln net.Listener

	mu     sync.Mutex
	st     state
	conns  map[net.Conn]struct{}
	nconn  int
	closed bool

	started   chan struct{} // closed when the first hello arrives
	startTime time.Time
	endedCh   chan struct{} // closed when the first end arrives

	cbMu      sync.Mutex // serialises OnWindow calls, in arrival order per connection
	wg        sync.WaitGroup
	stopWatch func()
}

// Listen starts a receiver on 127.0.0.1 with a free port. It stops accepting
// when ctx ends or Close is called.
func Listen(ctx context.Context) (*Receiver, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("stream receiver: listen on 127.0.0.1: %w", err)
	}
	r := &Receiver{ln: ln, conns: make(map[net.Conn]struct{}), started: make(chan struct{}), endedCh: make(chan struct{})}
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		r.accept()
	}()
	stop := make(chan struct{})
	go func() {
		defer r.wg.Done()
		select {
		case <-ctx.Done():
			_ = r.ln.Close()
		case <-stop:
		}
	}()
	r.stopWatch = func() { close(stop) }
	return r, nil
}

// Addr is the receiver's host:port, for --out resilience=tcp://ADDR.
func (r *Receiver) Addr() string { return r.ln.Addr().String() }

// OnWindow sets a function called with each window message as it arrives
// (before merging with others of the same start), for live progress. Calls
// are serialised; f must not call the receiver's methods that take its lock
// for long, nor block.
func (r *Receiver) OnWindow(f func(record.Window)) {
	r.mu.Lock()
	r.st.onWindow = f
	r.mu.Unlock()
}

// Started is closed when the output's hello arrives: k6 is about to start
// load. StartTime is when that was.
func (r *Receiver) Started() <-chan struct{} { return r.started }

// StartTime is when the first hello arrived (zero before).
func (r *Receiver) StartTime() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.startTime
}

// WaitEnded waits up to d for the end message and reports whether it came.
func (r *Receiver) WaitEnded(d time.Duration) bool {
	select {
	case <-r.endedCh:
		return true
	case <-time.After(d):
		return r.Ended()
	}
}

// Windows returns the windows received so far, merged per start and sorted.
func (r *Receiver) Windows() []record.Window { return r.Summary().Windows }

// Ended reports whether an end message arrived (k6 stopped cleanly).
func (r *Receiver) Ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.ended
}

// Summary returns everything received so far.
func (r *Receiver) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.summary()
}

// Close stops accepting, lets open connections send what they still have
// for up to two seconds, then cuts them and waits for its goroutines. Call
// it after k6 exited to have everything k6 sent.
func (r *Receiver) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.stopWatch()
	err := r.ln.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return err
	case <-time.After(closeGrace):
	}
	r.mu.Lock()
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	<-done
	return err
}

func (r *Receiver) accept() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return // listener closed
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			_ = c.Close()
			return
		}
		r.nconn++
		n := r.nconn
		r.conns[c] = struct{}{}
		r.wg.Add(1)
		r.mu.Unlock()
		go func() {
			defer r.wg.Done()
			r.serve(c, n)
		}()
	}
}

// serve reads one connection to its end.
func (r *Receiver) serve(c net.Conn, n int) {
	defer func() {
		_ = c.Close()
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
	}()
	where := fmt.Sprintf("connection %d ", n)
	err := readLines(c, func(line int, b []byte, tooLong bool) {
		r.mu.Lock()
		pos := fmt.Sprintf("%sline %d", where, line)
		switch {
		case tooLong:
			r.st.fail(fmt.Errorf("%s: longer than %d bytes", pos, MaxLine))
		default:
			if err := r.st.handle(b); err != nil {
				r.st.fail(fmt.Errorf("%s: %w", pos, err))
			}
		}
		if r.st.hello.Version != 0 && r.startTime.IsZero() {
			r.startTime = time.Now()
			close(r.started)
		}
		if r.st.ended {
			select {
			case <-r.endedCh:
			default:
				close(r.endedCh)
			}
		}
		pending, f := r.st.pending, r.st.onWindow
		r.st.pending = nil
		r.mu.Unlock()
		if f != nil && len(pending) > 0 {
			r.cbMu.Lock()
			for _, w := range pending {
				f(w)
			}
			r.cbMu.Unlock()
		}
	})
	if err != nil && !errors.Is(err, net.ErrClosed) {
		r.mu.Lock()
		r.st.fail(fmt.Errorf("connection %d: %w", n, err))
		r.mu.Unlock()
	}
}
