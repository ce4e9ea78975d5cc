package stream

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
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
	// Token, when set, must be in the hello of the stream's connection;
	// a connection without it is refused. Required when Addr is not
	// loopback. A run always sets one; without one, any hello is let in
	// (tools and tests on loopback).
	Token string
	// TLS, when set, makes the receiver speak TLS.
	TLS *tls.Config
	// OnRefused, when set, is called with the reason of each refused
	// connection, as it happens: the first few, then once to say that
	// further ones are only counted (Summary has them all).
	OnRefused func(error)
	// Log, when set, receives the merged windows as they settle and at
	// Close, so that memory stays flat however long the run: Summary then
	// holds only the windows not yet settled. The receiver does not close
	// the log.
	Log *WindowLog
	// Keep, when set, says which metrics to keep; the others are dropped
	// as they arrive.
	Keep func(metric string) bool
	// Streams is how many streams the receiver reads side by side, and
	// how many ends make it Ended (0 is 1): N for N load processes that
	// send to one address (a k6-operator TestRun with parallelism N). The
	// bounds on connections waiting for their hello grow by as many.
	Streams int
	// CheckShard, when set, says whether a hello's shard name (Hello.Shard)
	// is one the receiver waits for; a hello it refuses is turned away. A
	// shard's second stream while its first is open waits like any other,
	// and one after its end is refused.
	CheckShard func(shard string) error
	// HelloTimeout is how long a connection has to finish its TLS
	// handshake and send its hello; 0 is DefaultHelloTimeout.
	HelloTimeout time.Duration
	// Copy, when set, receives every line of the streams let in, as a
	// results file holds them (hellos without their token): what the run
	// received, for `chaosrun judge`. The receiver does not close it.
	Copy io.Writer
}

// Receiver accepts the output's connections and reads its stream (or
// Config.Streams of them): connections whose hello carries the token.
// Connections wait for their hello within bounds (Config.HelloTimeout, maxHello,
// maxPending, maxPendingPerSource); a stream beyond those it reads at a
// time, or one after the end, is refused. Only the streams' lines reach
// the summary; every refusal is counted there.
type Receiver struct {
	ln           net.Listener
	token        []byte
	onRefused    func(error)
	helloTimeout time.Duration

	mu      sync.Mutex
	st      state
	conns   map[net.Conn]struct{}
	nconn   int
	waiting waitingSet
	// active are the connections read as streams, at most want of them;
	// freed is closed (and replaced) when one ends. streams counts the
	// connections let in as streams.
	want        int
	active      map[int]bool
	freed       chan struct{}
	streams     int
	endedBy     int // the connection that sent the (last) end
	senders     senderSet
	refused     int
	refusedBy   map[string]int
	refusedErrs []error
	closed      bool

	started   chan struct{} // closed when the stream's hello arrives
	startTime time.Time
	endedCh   chan struct{} // closed when the end arrives

	cbMu      sync.Mutex // serialises OnWindow calls, in arrival order
	wg        sync.WaitGroup
	stop      chan struct{} // closed by Close
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
	r := &Receiver{ln: ln, onRefused: cfg.OnRefused, conns: make(map[net.Conn]struct{}), refusedBy: make(map[string]int),
		want: max(cfg.Streams, 1), active: make(map[int]bool), freed: make(chan struct{}),
		started: make(chan struct{}), endedCh: make(chan struct{}), stop: make(chan struct{})}
	r.waiting.extra, r.st.wantEnds = r.want-1, r.want
	if cfg.Token != "" {
		r.token = []byte(cfg.Token)
	}
	r.st.log, r.st.keep = cfg.Log, cfg.Keep
	r.senders.check, r.senders.copyTo = cfg.CheckShard, cfg.Copy
	r.helloTimeout = cmp.Or(cfg.HelloTimeout, DefaultHelloTimeout)
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
	sum.RefusedByReason = maps.Clone(r.refusedBy)
	sum.Streams = r.streams
	sum.CopyErr = r.senders.copyErr
	return sum
}

// Senders lists the streams' senders so far, in order of their first
// hello: which shards said hello, which ended, when each was last heard.
func (r *Receiver) Senders() []Sender {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.senders.list()
}

// Close stops accepting, cuts the connections still waiting for their
// hello, lets the stream send what it still has for up to two seconds,
// then cuts it and waits for its goroutines; with a log, it then moves
// every window still held to the log. Call it after the load process
// exited to have everything it sent.
func (r *Receiver) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	waiting := r.waiting.drain(reasonClosing)
	r.mu.Unlock()
	close(r.stop)
	r.stopWatch()
	err := r.ln.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	for _, w := range waiting {
		_ = w.c.Close()
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

// accept serves each connection in its own goroutine until the listener
// closes. A failed accept (out of file descriptors) is counted, and
// accepting resumes after a pause.
func (r *Receiver) accept() {
	var pause time.Duration
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			r.refuse(0, nil, refuseAs(reasonAccept, "accept: %w", err))
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			select {
			case <-r.stop:
				return
			case <-time.After(pause):
			}
			continue
		}
		pause = 0
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

// serve reads connection n: its hello, within the bounds on connections
// not yet let in, then, if it is let in as the stream, every line to its
// end. With a token, every hello is answered (welcome or refused) but for
// connections dropped unread; without one, only a hello that carries a
// token is (its sender reads the answer; an older one would not, and
// closing a socket with unread data resets it).
func (r *Receiver) serve(c net.Conn, n int) {
	defer func() {
		_ = c.Close()
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
	}()
	br := bufio.NewReaderSize(c, maxHello)
	hello, answers, ref := r.admit(c, n, br)
	answers = answers || r.token != nil
	if ref != nil {
		r.refuse(n, c.RemoteAddr(), ref)
		if answers && ref.reason != reasonDropped && ref.reason != reasonClosing {
			answer(c, ref)
		}
		return
	}
	defer r.release(n)
	if answers {
		answer(c, nil)
	}
	r.line(n, 1, hello, false)
	// What the hello's reader already holds comes first.
	held, _ := br.Peek(br.Buffered())
	rest := io.MultiReader(bytes.NewReader(bytes.Clone(held)), c)
	err := readLines(rest, 2, false, func(line int, b []byte, tooLong bool) { r.line(n, line, b, tooLong) })
	// A reset after the end loses nothing: the sender closed without
	// reading the welcome.
	if err != nil && !errors.Is(err, net.ErrClosed) && !r.Ended() {
		r.mu.Lock()
		r.st.fail(fmt.Errorf("connection %d: %w", n, err))
		r.mu.Unlock()
	}
}

// admit reads connection n's hello while it counts as waiting (which may
// drop the oldest waiting one), then makes it the stream. It returns the
// hello, whether its sender waits for an answer, or why it is refused.
func (r *Receiver) admit(c net.Conn, n int, br *bufio.Reader) ([]byte, bool, *refusal) {
	w := &waiter{c: c, n: n, src: sourceOf(c)}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, false, refuseAs(reasonClosing, "the receiver is closing")
	}
	victim := r.waiting.add(w)
	r.mu.Unlock()
	if victim != nil {
		_ = victim.c.Close()
	}
	hello, answers, ref := readHello(c, br, r.token, r.helloTimeout)
	r.mu.Lock()
	r.waiting.remove(w)
	why := w.why
	r.mu.Unlock()
	switch {
	case why == reasonDropped:
		return nil, false, refuseAs(why, "dropped unread: too many connections were waiting for their hello (at most %d, %d from one source)", maxPending, maxPendingPerSource)
	case why != "":
		return nil, false, refuseAs(why, "no hello before the receiver closed")
	case ref != nil:
		return nil, answers, ref
	}
	if ref := r.claim(n, helloShard(hello), c.RemoteAddr().String()); ref != nil {
		return nil, answers, ref
	}
	return hello, answers, nil
}

// claim makes connection n a stream: as many at a time as the receiver
// reads, none after the end. A stream that comes while they all run waits
// up to handoverWait for one to end (an output that reconnects after a
// failed write closed the old connection first), then is refused: its
// windows would count twice.
func (r *Receiver) claim(n int, shard, from string) *refusal {
	timer := time.NewTimer(handoverWait)
	defer timer.Stop()
	for {
		r.mu.Lock()
		switch {
		case r.closed:
			r.mu.Unlock()
			return refuseAs(reasonClosing, "the receiver is closing")
		case r.st.ended:
			by := r.endedBy
			r.mu.Unlock()
			return refuseAs(reasonAfterEnd, "the stream already ended (connection %d sent its end)", by)
		}
		busy, ref := r.senders.admitShard(shard)
		switch {
		case ref != nil:
			r.mu.Unlock()
			return ref
		case len(r.active) < r.want && !busy:
			r.active[n] = true
			r.streams++
			r.senders.open(n, shard, from, time.Now())
			r.mu.Unlock()
			return nil
		}
		cur, freed := slices.Sorted(maps.Keys(r.active)), r.freed
		r.mu.Unlock()
		select {
		case <-freed:
		case <-timer.C:
			return refuseAs(reasonSecond, "%s already stream(s) to this receiver, which reads %d at a time (does another load process send to this address?)", connections(cur), r.want)
		}
	}
}

// connections names connections by number: "connection 3", "connections 3, 5".
func connections(ns []int) string {
	if len(ns) == 1 {
		return fmt.Sprintf("connection %d", ns[0])
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return "connections " + strings.Join(parts, ", ")
}

// release ends connection n's turn as a stream.
func (r *Receiver) release(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.senders.close(n)
	if r.active[n] {
		delete(r.active, n)
		close(r.freed)
		r.freed = make(chan struct{})
	}
}

// line handles line number line of connection n, the stream.
func (r *Receiver) line(n, line int, b []byte, tooLong bool) {
	r.mu.Lock()
	switch {
	case tooLong:
		r.st.fail(fmt.Errorf("connection %d line %d: longer than %d bytes", n, line, lineLimit))
	default:
		ends := r.st.ends
		if err := r.st.handle(b); err != nil {
			r.st.fail(fmt.Errorf("connection %d line %d: %w", n, line, err))
		} else {
			r.senders.copyLine(line, b)
		}
		r.senders.line(n, r.st.ends > ends, time.Now())
	}
	if r.st.hello.Version != 0 && r.startTime.IsZero() {
		r.startTime = time.Now()
		close(r.started)
	}
	if r.st.ended && r.endedBy == 0 {
		r.endedBy = n
		close(r.endedCh)
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

// refuse records a refused connection (n 0 and from nil: a failed accept).
func (r *Receiver) refuse(n int, from net.Addr, ref *refusal) {
	var err error = ref
	if from != nil {
		err = fmt.Errorf("connection %d from %s refused: %w", n, from, ref)
	}
	r.mu.Lock()
	r.refused++
	r.refusedBy[ref.reason]++
	count := r.refused
	if count <= maxKeptErrors {
		r.refusedErrs = append(r.refusedErrs, err)
	}
	f := r.onRefused
	r.mu.Unlock()
	switch {
	case f == nil:
	case count <= maxKeptErrors:
		f(err)
	case count == maxKeptErrors+1:
		f(fmt.Errorf("more than %d connections refused: further ones are counted, not shown one by one", maxKeptErrors))
	}
}
