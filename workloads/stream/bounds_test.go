package stream

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWaitingSetDropsOldest(t *testing.T) {
	tests := []struct {
		name string
		// arrivals are the sources of connections 1, 2, …, in order.
		arrivals []string
		// want is the connection dropped by the last arrival (0: none).
		want int
	}{
		{"room left", repeat("a", maxPendingPerSource-1), 0},
		{"source at its bound drops its oldest", repeat("a", maxPendingPerSource+1), 1},
		{"a full set drops the oldest of the heaviest source",
			sources("e", 12, "a", 32, "b", 31, "c", 31, "d", 22, "f", 1), 13},
		{"of equally heavy sources, the one whose oldest came first",
			append(interleave(maxPending, "a", "b", "c", "d"), "e"), 1},
		{"a newcomer's own source is not spared at the total bound",
			sources("a", 31, "b", 30, "c", 30, "d", 30, "e", 7, "a", 1), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s waitingSet
			var dropped *waiter
			for i, src := range tt.arrivals {
				dropped = s.add(&waiter{n: i + 1, src: src})
				if s.n > maxPending || len(s.bySource[src]) > maxPendingPerSource {
					t.Fatalf("after %d arrivals: %d waiting, %d from %s", i+1, s.n, len(s.bySource[src]), src)
				}
			}
			got := 0
			if dropped != nil {
				got = dropped.n
				if dropped.why != reasonDropped {
					t.Errorf("dropped connection marked %q", dropped.why)
				}
			}
			if got != tt.want {
				t.Fatalf("last arrival dropped connection %d, want %d", got, tt.want)
			}
		})
	}
}

func repeat(src string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = src
	}
	return out
}

// sources lists src1 n1 times, then src2 n2 times, and so on.
func sources(pairs ...any) []string {
	var out []string
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, repeat(pairs[i].(string), pairs[i+1].(int))...)
	}
	return out
}

func interleave(n int, srcs ...string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = srcs[i%len(srcs)]
	}
	return out
}

// idleFrom opens n connections to addr from local address from (any
// 127.0.0.0/8 address works on Linux) and leaves them silent.
func idleFrom(t *testing.T, addr, from string, n int) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
}

// TestReceiverStreamGetsInThroughIdleFlood: a thousand connections that
// never send a hello, from one source and from several, hold at most
// maxPending slots (maxPendingPerSource per source); a stream with the
// token that comes after them is let in, and every dropped connection is
// counted. Before, the 65th waiting connection and every later one,
// k6's too, was refused.
func TestReceiverStreamGetsInThroughIdleFlood(t *testing.T) {
	for _, sources := range [][]string{{"127.0.0.1"}, {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"}} {
		t.Run(strings.Join(sources, ","), func(t *testing.T) {
			r, err := ListenWith(context.Background(), Config{Token: "s3cret"})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for _, src := range sources {
				idleFrom(t, r.Addr(), src, 1000/len(sources))
			}
			waitFor(t, func() bool { return r.Summary().Refused >= 1000-maxPending })
			r.mu.Lock()
			waiting := r.waiting.n
			r.mu.Unlock()
			if waiting > maxPending {
				t.Fatalf("%d connections waiting, want at most %d", waiting, maxPending)
			}
			cl := dialClient(t, r.Addr(), nil)
			cl.send(t, hello("s3cret"))
			if got := cl.reply(t); got.Type != "welcome" {
				t.Fatalf("the stream after the flood: %+v", got)
			}
			cl.send(t, oneWindow, endLine)
			if !r.WaitEnded(5 * time.Second) {
				t.Fatal("no end")
			}
			cl.c.Close()
			r.Close()
			sum := r.Summary()
			if sum.RefusedByReason[reasonDropped] < 1000-maxPending || len(sum.Windows) != 1 || sum.Streams != 1 {
				t.Fatalf("refused %v, %d windows, %d streams", sum.RefusedByReason, len(sum.Windows), sum.Streams)
			}
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i == 500 {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReceiverOneStream: only the connection let in as the stream adds
// windows. A second one while it runs is refused after handoverWait, one
// after it broke off is let in (the output reconnects), one after the end
// is refused; connections without the token add nothing.
func TestReceiverOneStream(t *testing.T) {
	defer func(d time.Duration) { handoverWait = d }(handoverWait)
	handoverWait = 200 * time.Millisecond
	w := func(sec int) string {
		return fmt.Sprintf(`{"type":"window","start":"2026-01-01T00:00:%02dZ","series":[{"metric":"http_reqs","kind":"counter","count":1,"sum":1}]}`, sec)
	}
	r, err := ListenWith(context.Background(), Config{Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first := dialClient(t, r.Addr(), nil)
	first.send(t, hello("s3cret"), w(0))
	if got := first.reply(t); got.Type != "welcome" {
		t.Fatalf("first: %+v", got)
	}
	for _, tc := range []struct{ name, hello, want string }{
		{"second stream", hello("s3cret"), "connection 1 already stream(s) to this receiver, which reads 1 at a time"},
		{"no token", hello(""), "has no token"},
		{"wrong token", hello("guess"), "wrong token"},
		{"no hello", w(1), "not a hello"},
	} {
		cl := dialClient(t, r.Addr(), nil)
		cl.send(t, tc.hello, w(2), w(3))
		if got := cl.reply(t); got.Type != "refused" || !strings.Contains(got.Error, tc.want) {
			t.Fatalf("%s: reply %+v, want refused with %q", tc.name, got, tc.want)
		}
	}
	first.c.Close()
	again := dialClient(t, r.Addr(), nil)
	again.send(t, hello("s3cret"), w(1), endLine)
	if got := again.reply(t); got.Type != "welcome" {
		t.Fatalf("reconnect: %+v", got)
	}
	if !r.WaitEnded(5 * time.Second) {
		t.Fatal("no end")
	}
	late := dialClient(t, r.Addr(), nil)
	late.send(t, hello("s3cret"), w(4))
	if got := late.reply(t); got.Type != "refused" || !strings.Contains(got.Error, "already ended") {
		t.Fatalf("after the end: %+v", got)
	}
	again.c.Close()
	r.Close()
	sum := r.Summary()
	if len(sum.Windows) != 2 || sum.Streams != 2 || sum.Refused != 5 || sum.RefusedByReason[reasonSecond] != 1 || sum.RefusedByReason[reasonAfterEnd] != 1 {
		t.Fatalf("%d windows (want 2), %d streams (want 2), refused %d %v", len(sum.Windows), sum.Streams, sum.Refused, sum.RefusedByReason)
	}
}

// TestReceiverLongLinesBounded measures what the receiver allocates while
// eight connections with the token each send 15 MB without a newline (one
// is the stream, the others are refused unread) and the stream then ends
// that line and sends one longer than MaxLine: at most 2×MaxLine for each
// of the stream's two long lines (a line buffer grown by doubling, let go
// after the line) and 8 MB for the rest. Before, every connection held its
// own line buffer: more than 8 × 16 MB.
func TestReceiverLongLinesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates and sends 150 MB")
	}
	defer func(d time.Duration) { handoverWait = d }(handoverWait)
	handoverWait = 200 * time.Millisecond
	unfinished := []byte(`{"type":"window","start":"2026-01-01T00:00:00Z","pad":"` + strings.Repeat("A", 15<<20))
	tooLong := append(bytes.Repeat([]byte("B"), MaxLine+1<<20), '\n')
	r, err := ListenWith(context.Background(), Config{Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c, err := net.Dial("tcp", r.Addr())
			if err != nil {
				return
			}
			defer c.Close()
			cl := &client{c: c, br: bufio.NewReader(c)}
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = c.Write([]byte(hello("s3cret") + "\n"))
			welcome := cl.reply(t).Type == "welcome"
			_, _ = c.Write(unfinished)
			if welcome { // the stream: its line ends, then a longer one
				_, _ = c.Write([]byte("\"}\n"))
				_, _ = c.Write(tooLong)
				_, _ = c.Write([]byte(oneWindow + "\n" + endLine + "\n"))
			}
		})
	}
	wg.Wait()
	r.Close()
	runtime.ReadMemStats(&after)
	sum := r.Summary()
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MiB; refused %v; %d malformed: %v", alloc>>20, sum.RefusedByReason, sum.Malformed, sum.Errors)
	if limit := uint64(2*2*MaxLine + 8<<20); alloc > limit {
		t.Errorf("allocated %d MiB, want at most %d", alloc>>20, limit>>20)
	}
	if sum.Refused != 7 || sum.Streams != 1 || !sum.Ended || len(sum.Windows) != 1 || sum.Malformed != 1 {
		t.Fatalf("refused %d, %d streams, ended %v, %d windows, %d malformed", sum.Refused, sum.Streams, sum.Ended, len(sum.Windows), sum.Malformed)
	}
}

// TestReceiverSeveralStreams: a receiver for N streams (N load processes
// sending to one address) reads N side by side, refuses one more, and has
// ended once all N sent their end.
func TestReceiverSeveralStreams(t *testing.T) {
	defer func(d time.Duration) { handoverWait = d }(handoverWait)
	handoverWait = 200 * time.Millisecond
	r, err := ListenWith(context.Background(), Config{Token: "s3cret", Streams: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var streams []*client
	for range 2 {
		cl := dialClient(t, r.Addr(), nil)
		cl.send(t, hello("s3cret"), oneWindow)
		if got := cl.reply(t); got.Type != "welcome" {
			t.Fatalf("stream %d: %+v", len(streams)+1, got)
		}
		streams = append(streams, cl)
	}
	third := dialClient(t, r.Addr(), nil)
	third.send(t, hello("s3cret"), oneWindow)
	if got := third.reply(t); got.Type != "refused" || !strings.Contains(got.Error, "connections 1, 2 already stream(s) to this receiver, which reads 2 at a time") {
		t.Fatalf("third: %+v", got)
	}
	streams[0].send(t, endLine)
	if r.WaitEnded(300 * time.Millisecond) {
		t.Fatal("ended after one of two ends")
	}
	streams[1].send(t, endLine)
	if !r.WaitEnded(5 * time.Second) {
		t.Fatal("not ended after both ends")
	}
	for _, cl := range streams {
		cl.c.Close()
	}
	r.Close()
	if sum := r.Summary(); sum.Streams != 2 || sum.Refused != 1 || len(sum.Windows) != 1 || sum.Windows[0].Series[0].Count != 6 {
		t.Fatalf("%d streams, %d refused, windows %+v", sum.Streams, sum.Refused, sum.Windows)
	}
}
