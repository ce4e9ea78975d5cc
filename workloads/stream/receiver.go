package stream

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// closeGrace is how long Close lets open connections finish sending before
// it cuts them.
const closeGrace = 2 * time.Second

// Config says where a Receiver listens and whom it lets in.
type Config struct {
	// Addr is the host:port to listen on; "" is 127.0.0.1 with a free port.
	Addr string
	// Token, when set, must be in every connection's hello; a connection
	// without it is refused. Required when Addr is not loopback.
	Token string
	// TLS, when set, makes the receiver speak TLS.
	TLS *tls.Config
	// OnRefused, when set, is called with the reason of each refused
	// connection, as it happens.
	OnRefused func(error)
	// Log, when set, receives the merged windows as they settle and at
	// Close, so that memory stays flat however long the run: Summary then
	// holds only the windows not yet settled. The receiver does not close
	// the log.
	Log *WindowLog
	// Keep, when set, says which metrics to keep; the others are dropped
	// as they arrive.
	Keep func(metric string) bool
}

// Receiver accepts the output's TCP connections and merges what they send.
type Receiver struct {
	ln        net.Listener
	token     []byte
	onRefused func(error)

	mu          sync.Mutex
	st          state
	conns       map[net.Conn]struct{}
	nconn       int
	pending     int // connections not yet let in (token mode)
	refused     int
	refusedErrs []error
	closed      bool

	started   chan struct{} // closed when the first hello arrives
	startTime time.Time
	endedCh   chan struct{} // closed when the first end arrives

	cbMu      sync.Mutex // serialises OnWindow calls, in arrival order per connection
	wg        sync.WaitGroup
	stopWatch func()
}

// Listen starts a receiver on 127.0.0.1 with a free port. It stops accepting
// when ctx ends or Close is called.
func Listen(ctx context.Context) (*Receiver, error) { return ListenWith(ctx, Config{}) }

// ListenWith starts a receiver as cfg says. A listen address other than
// loopback needs a token. It stops accepting when ctx ends or Close is
// called.
func ListenWith(ctx context.Context, cfg Config) (*Receiver, error) {
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("stream receiver: listen address %q is not HOST:PORT: %w", addr, err)
	}
	if !IsLoopback(addr) && cfg.Token == "" {
		return nil, fmt.Errorf("stream receiver: %s is not a loopback address: a token is required so that only this run's k6 instances are let in", addr)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("stream receiver: listen on %s: %w", addr, err)
	}
	if cfg.TLS != nil {
		ln = tls.NewListener(ln, cfg.TLS)
	}
	r := &Receiver{ln: ln, onRefused: cfg.OnRefused, conns: make(map[net.Conn]struct{}), started: make(chan struct{}), endedCh: make(chan struct{})}
	if cfg.Token != "" {
		r.token = []byte(cfg.Token)
	}
	r.st.log, r.st.keep = cfg.Log, cfg.Keep
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

// DialAddr is the address a process on this machine dials: Addr, with an
// unspecified host (0.0.0.0, ::) replaced by loopback.
func (r *Receiver) DialAddr() string { return dialAddr(r.ln.Addr()) }

// dialAddr maps an unspecified host to 127.0.0.1: Listen uses "tcp",
// so a wildcard listener (0.0.0.0 or a dual-stack ::) accepts IPv4.
func dialAddr(addr net.Addr) string {
	a, ok := addr.(*net.TCPAddr)
	if !ok || !a.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port))
}

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

// Windows returns the windows received so far and not yet moved to the
// log, merged per start and sorted.
func (r *Receiver) Windows() []record.Window { return r.Summary().Windows }

// Ended reports whether an end message arrived (k6 stopped cleanly).
func (r *Receiver) Ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.ended
}

// Summary returns everything received so far, and the connections refused.
func (r *Receiver) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum := r.st.summary()
	sum.Refused = r.refused
	sum.RefusedErrors = append([]error(nil), r.refusedErrs...)
	return sum
}

// Close stops accepting, lets open connections send what they still have
// for up to two seconds, then cuts them and waits for its goroutines; with
// a log, it then moves every window still held to the log. Call it after
// k6 exited to have everything k6 sent.
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
	case <-time.After(closeGrace):
		r.mu.Lock()
		for c := range r.conns {
			_ = c.Close()
		}
		r.mu.Unlock()
		<-done
	}
	r.mu.Lock()
	r.st.settleAll()
	r.mu.Unlock()
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

// serve reads one connection to its end. With a token, the connection is
// let in only after a hello that carries it. A hello with a token is
// answered (welcome or refused): its sender reads the answer. One without
// is not, since an older sender would not read it, and closing a socket
// with unread data resets it.
func (r *Receiver) serve(c net.Conn, n int) {
	defer func() {
		_ = c.Close()
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
	}()
	where := fmt.Sprintf("connection %d ", n)
	onLine := func(line int, b []byte, tooLong bool) {
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
	}
	br := bufio.NewReaderSize(c, readBuf)
	first := 1
	if r.token != nil {
		hello, err := r.admit(c, br)
		if err != nil {
			r.refuse(fmt.Errorf("%sfrom %s refused: %w", where, c.RemoteAddr(), err))
			answer(c, err)
			return
		}
		answer(c, nil)
		onLine(1, hello, false)
		first = 2
	}
	err := readLines(br, first, func(line int, b []byte, tooLong bool) {
		onLine(line, b, tooLong)
		if line == 1 && !tooLong && wantsAnswer(b) {
			answer(c, nil)
		}
	})
	if err != nil && !errors.Is(err, net.ErrClosed) {
		r.mu.Lock()
		r.st.fail(fmt.Errorf("connection %d: %w", n, err))
		r.mu.Unlock()
	}
}

// admit reads and checks a connection's hello, within the bound on
// connections not yet let in.
func (r *Receiver) admit(c net.Conn, br *bufio.Reader) ([]byte, error) {
	r.mu.Lock()
	if r.pending >= maxPending {
		r.mu.Unlock()
		return nil, fmt.Errorf("%d connections are already waiting to show a token", maxPending)
	}
	r.pending++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.pending--
		r.mu.Unlock()
	}()
	return readHello(c, br, r.token)
}

// refuse records a refused connection.
func (r *Receiver) refuse(err error) {
	r.mu.Lock()
	r.refused++
	if len(r.refusedErrs) < maxKeptErrors {
		r.refusedErrs = append(r.refusedErrs, err)
	}
	f := r.onRefused
	r.mu.Unlock()
	if f != nil {
		f(err)
	}
}
