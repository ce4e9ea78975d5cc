// Package native is chaosrun's own load engine: open-model HTTP load from a
// workload declared in the scenario (request streams with arrival shapes,
// key streams and client models), written as the same one-second windows,
// with k6's metric names and tags, as k6 with the xk6-resilience output.
//
// Arrivals come on schedule and never wait for answers. Each stream has a
// bounded pool of workers; an arrival that finds none free is dropped and
// counted (dropped_iterations), never delayed. A request's duration counts
// from when it was due, so a slow server cannot hide its latency by
// slowing the load down (no coordinated omission).
package native

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// Output receives the engine's windows; a stream.Writer is one.
type Output interface {
	Window(record.Window) error
	// End closes the output, saying how many samples were lost.
	End(lost int64) error
}

var _ Output = (*stream.Writer)(nil)

// Options are the parts of a run that tests replace.
type Options struct {
	// Transport, when set, sends the requests in place of the engine's
	// own HTTP/1.1 client (package h1); Transport(n) makes one for load.
	Transport http.RoundTripper
	// FlushEvery is how often finished windows are written; default 250 ms.
	FlushEvery time.Duration
	// Tap, when set, sees each HTTP request's duration exactly as it goes
	// into the windows' histograms (on the collector's goroutine): what
	// checks of the histograms' quantiles compare with.
	Tap func(stream string, status int, d time.Duration)
}

// Summary is what a run did.
type Summary struct {
	Start, End time.Time
	// Lost counts samples that could not be aggregated or written.
	Lost int64
}

// Version names the engine in the stream's hello.
const Version = "chaosrun-native v0.1.0"

// Hello is the results stream's hello for this engine.
func Hello() stream.Hello { return stream.Hello{Extension: Version} }

// Transport returns an HTTP transport for load: no compression, no HTTP/2,
// at most conns connections per host, all kept open when idle.
func Transport(conns int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxConnsPerHost:     conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   false,
	}
}

// Run runs shard of spec's load to its end (or ctx's) and writes its
// windows to out, ending it. It returns once every request has finished or
// was cut off after the spec's grace.
func Run(ctx context.Context, spec Spec, shard Shard, out Output) (Summary, error) {
	return RunWith(ctx, spec, shard, out, Options{})
}

// RunWith is Run with options.
func RunWith(ctx context.Context, spec Spec, shard Shard, out Output, opts Options) (Summary, error) {
	if shard.Count == 0 {
		shard.Count = 1
	}
	if shard.Index < 0 || shard.Index >= shard.Count {
		return Summary{}, fmt.Errorf("native: shard %d of %d: want 0 <= index < count", shard.Index, shard.Count)
	}
	if err := spec.Validate(); err != nil {
		return Summary{}, err
	}
	e, err := newEngine(spec, shard, out, opts)
	if err == nil {
		err = e.dialGRPC(ctx)
	}
	if err != nil {
		if e != nil {
			e.closeGRPC()
		}
		return Summary{}, err
	}
	defer e.closeGRPC()
	return e.run(ctx)
}

// engine is one run of one shard.
type engine struct {
	spec  Spec
	shard Shard
	opts  Options
	lanes []*lane
	col   *collector
	start time.Time
	// reqCtx is the requests' context, cut off after the grace.
	reqCtx context.Context
	// workers counts the running workers; recs are their recorders (and
	// the dispatcher's first), which the collector reads.
	workers sync.WaitGroup
	recMu   sync.Mutex
	recs    []*recorder
	grace   time.Duration
	drops   *recorder
	rt      http.RoundTripper
	// fast sends when Options.Transport is not set.
	fast *fastClients
}

func newEngine(spec Spec, shard Shard, out Output, opts Options) (*engine, error) {
	e := &engine{spec: spec, shard: shard, opts: opts, grace: spec.Grace, drops: &recorder{}}
	if e.grace == 0 {
		e.grace = 5 * time.Second
	}
	if e.opts.FlushEvery <= 0 {
		e.opts.FlushEvery = 250 * time.Millisecond
	}
	for i := range spec.Streams {
		l, err := compileLane(&spec.Streams[i], i, shard.Count)
		if err != nil {
			return nil, fmt.Errorf("native workload: stream %q: %w", spec.Streams[i].Name, err)
		}
		e.lanes = append(e.lanes, l)
	}
	e.rt = opts.Transport
	if e.rt == nil {
		e.fast = newFastClients(e.lanes, spec.connections(shard.Count))
	}
	e.col = newCollector(e.lanes, out)
	e.col.tap = opts.Tap
	e.recs = append(e.recs, e.drops)
	return e, nil
}

func (e *engine) run(ctx context.Context) (Summary, error) {
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	e.reqCtx = reqCtx
	for _, l := range e.lanes {
		for range min(l.nworkers, prestart) {
			e.startWorker(l)
		}
	}
	colDone := make(chan struct{})
	stopCol := make(chan struct{})
	go func() {
		defer close(colDone)
		e.collect(stopCol)
	}()
	e.start = time.Now()
	e.dispatch(ctx)
	for _, l := range e.lanes {
		close(l.jobs)
	}
	finished := make(chan struct{})
	go func() {
		e.workers.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(e.grace):
		cancelReqs() // requests still out are cut off and not counted
		if e.fast != nil {
			e.fast.cutAll()
		}
		<-finished
	}
	close(stopCol)
	<-colDone
	if e.fast != nil {
		e.fast.cutAll()
	}
	sum := Summary{Start: e.start, End: time.Now(), Lost: e.col.lost}
	err := errors.Join(e.col.writeErr, e.col.out.End(e.col.lost))
	return sum, err
}

// collect gathers events and writes finished windows until stop, then
// writes the rest.
func (e *engine) collect(stop <-chan struct{}) {
	t := time.NewTicker(e.opts.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			e.col.gather(e.recorders())
			e.col.flush(0)
			return
		case now := <-t.C:
			e.col.gather(e.recorders())
			// A window is complete once every event of its second is
			// logged; a straggler later goes out as a second line of the
			// same start, which the receiver merges.
			e.col.flush(now.Add(-settle).UnixNano())
		}
	}
}

// prestart is how many workers a stream starts with; more start as
// arrivals find all of them busy, up to its bound.
const prestart = 16

// startWorker starts one more worker of lane l. Only the dispatcher (and
// run, before it) starts workers.
func (e *engine) startWorker(l *lane) {
	w := newWorker(e, l, int(l.started), e.reqCtx)
	l.started++
	e.recMu.Lock()
	e.recs = append(e.recs, w.rec)
	e.recMu.Unlock()
	e.workers.Add(1)
	go func() {
		defer e.workers.Done()
		w.loop()
	}()
}

// recorders returns the recorders so far.
func (e *engine) recorders() []*recorder {
	e.recMu.Lock()
	defer e.recMu.Unlock()
	return e.recs
}

// settle is how long after a second ends its window is written.
const settle = 500 * time.Millisecond
