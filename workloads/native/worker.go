package native

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/chaosrun/chaosrun/models/client"
	"github.com/chaosrun/chaosrun/models/rng"
)

// errCut is a request cut off when the run stopped: it is not counted.
var errCut = errors.New("native: cut off at the end of the run")

// worker sends one stream's requests, one at a time, reusing its request
// objects; it logs what it sees in its own recorder.
type worker struct {
	e   *engine
	l   *lane
	rec *recorder
	cl  *client.Client

	base    context.Context // cut off after the grace
	ctx     context.Context
	cancel  context.CancelFunc
	timer   *time.Timer // cancels ctx when a request times out
	req     *http.Request
	url     url.URL
	body    *reqBody
	bodyBuf []byte
	pathBuf []byte
	hdrVals [][]string // per dynamic header, the slice in req.Header
	dlVal   []string   // the deadline header's value slice
	dlName  string     // the deadline header's canonical name
	// fr is the engine's own sending path (fast.go); nil when
	// Options.Transport sends.
	fr *fastReq
	// gc is the gRPC call of a gRPC stream's worker (grpc.go).
	gc *grpcCall

	d          draw
	variant    uint16
	lastStatus uint16
	due        int64       // the arrival's due time, Unix ns
	resp       http.Header // the last answer's headers
	attempt    func(n int, remaining time.Duration) (client.Outcome, error)
	lookup     func(name string) string
}

// reqBody is a request body that says when the transport is done with it.
type reqBody struct {
	r      bytes.Reader
	closed atomic.Bool
}

func (b *reqBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *reqBody) Close() error               { b.closed.Store(true); return nil }

func newWorker(e *engine, l *lane, i int, base context.Context) *worker {
	w := &worker{e: e, l: l, rec: &recorder{}, base: base}
	n := len(l.keys)
	w.d = draw{seed: strconv.FormatUint(e.spec.Seed, 10), text: make([][]byte, n), class: make([]uint8, n), shard: make([]int, n)}
	w.req = &http.Request{Method: l.Method, Header: http.Header{}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	for _, h := range l.headers {
		if h.val.isStatic {
			w.req.Header[h.name] = []string{h.val.static}
			continue
		}
		v := []string{""}
		w.hdrVals = append(w.hdrVals, v)
		w.req.Header[h.name] = v
	}
	if c := l.Client; c != nil {
		seed := rng.Mix(rng.Mix(e.spec.Seed, uint64(l.idx)), uint64(e.shard.Index)<<32|uint64(i))
		w.cl, _ = client.New(c.Config, seed) // validated with the spec
		if c.Tier != "" {
			w.req.Header.Set(c.Headers.Criticality, c.Tier)
		}
		if c.Deadline > 0 {
			w.dlVal, w.dlName = []string{""}, http.CanonicalHeaderKey(c.Headers.Deadline)
			w.req.Header[w.dlName] = w.dlVal
		}
	}
	w.body = &reqBody{}
	w.body.closed.Store(true)
	if l.Body != "" {
		w.req.GetBody = w.getBody
	}
	w.attempt = w.tryOnce
	w.lookup = w.respHeader
	if l.grpc != nil {
		return w
	}
	if e.fast != nil {
		w.initFast()
		return w
	}
	w.renew()
	return w
}

// renew starts a fresh request context: the old one's timeout fired.
func (w *worker) renew() {
	w.ctx, w.cancel = context.WithCancel(w.base)
	w.timer = time.AfterFunc(time.Hour, w.cancel)
	w.timer.Stop()
	w.req = w.req.WithContext(w.ctx)
}

func (w *worker) loop() {
	for j := range w.l.jobs {
		w.serve(j)
		w.l.busy.Add(-1)
	}
	if w.timer != nil {
		w.timer.Stop()
		w.cancel()
	}
}

// serve makes one arrival's logical request and logs it.
func (w *worker) serve(j job) {
	l := w.l
	w.due, w.lastStatus, w.resp = j.due, 0, nil
	w.variant = l.prepareDraw(&w.d, j.g)
	w.build(j.g)
	var ev event
	status := 0
	if w.cl == nil {
		var err error
		if status, err = w.send(j.due, l.Timeout); err != nil {
			return
		}
		ev.attempts = 1
		if status >= 200 && status < 400 {
			ev.flags |= flOK
		}
	} else {
		res, err := w.cl.DoFrom(w.base, time.Unix(0, j.due), w.attempt)
		if err != nil || w.base.Err() != nil {
			return
		}
		status = int(w.lastStatus)
		ev.attempts, ev.retries, ev.bp = clamp16(res.Attempts), clamp16(res.Retries), clamp16(res.BackPressure)
		ev.flags |= flag(res.OK, flOK) | flag(res.GaveUp, flGaveUp) | flag(res.Rejected, flRejected) | flag(res.Goodput, flGoodput)
		if res.Rejected {
			w.resp, status = nil, 0
			if w.fr != nil {
				w.fr.answered = false
			}
		}
	}
	end := time.Now().UnixNano()
	if status >= 0 && status < len(l.expect) && l.expect[status] {
		ev.flags |= flCheck
	}
	ev.marks = w.marks(status, end-j.due)
	ev.kind, ev.t, ev.dur, ev.stream, ev.variant, ev.status = evRequest, end, end-j.due, uint16(l.idx), w.variant, uint16(status)
	w.rec.add(ev)
}

func flag(b bool, f uint8) uint8 {
	if b {
		return f
	}
	return 0
}

func clamp16(n int) uint16 { return uint16(min(max(n, 0), 65535)) }

// marks says which custom metrics' conditions the request met.
func (w *worker) marks(status int, elapsed int64) uint16 {
	var m uint16
	for i, c := range w.l.Metrics {
		ok := (len(c.When.Status) == 0 || containsInt(c.When.Status, status)) &&
			(c.When.Within == 0 || elapsed <= int64(c.When.Within)) &&
			(c.When.Header == "" || w.respHeaderCanon(w.l.metricHeaders[i]) == c.When.Value)
		if ok {
			m |= 1 << i
		}
	}
	return m
}

func containsInt(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// tryOnce is one attempt of a client model's request.
func (w *worker) tryOnce(n int, remaining time.Duration) (client.Outcome, error) {
	start := w.due
	if n > 0 {
		start = time.Now().UnixNano()
	}
	timeout := w.l.Timeout
	if remaining > 0 {
		timeout = min(timeout, remaining)
		ms := remaining.Milliseconds()
		if w.fr != nil {
			w.fr.deadline = strconv.AppendInt(w.fr.deadline[:0], ms, 10)
		} else {
			w.dlVal[0] = strconv.FormatInt(ms, 10)
		}
	}
	status, err := w.send(start, timeout)
	if err != nil {
		return client.Outcome{}, err
	}
	w.lastStatus = uint16(status)
	return w.l.Client.Backpressure.Classify(status, w.lookup), nil
}

func (w *worker) respHeader(name string) string {
	return w.respHeaderCanon(http.CanonicalHeaderKey(name))
}

func (w *worker) respHeaderCanon(name string) string {
	if w.fr != nil {
		return w.fastHeader(name)
	}
	if v := w.resp[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// send makes one HTTP request that counts from start (Unix ns) and logs it;
// status 0 is no answer.
func (w *worker) send(start int64, timeout time.Duration) (int, error) {
	var status int
	switch {
	case w.gc != nil:
		status = w.sendGRPC()
	case w.fr != nil:
		status = w.sendFast(timeout)
	default:
		status = w.sendStd(timeout)
	}
	end := time.Now().UnixNano()
	if w.base.Err() != nil {
		return 0, errCut
	}
	w.rec.add(event{kind: evAttempt, t: end, dur: end - start, stream: uint16(w.l.idx), variant: w.variant, status: uint16(min(status, 65535))})
	return status, nil
}

// sendStd makes one attempt through Options.Transport; status 0 is no
// answer.
func (w *worker) sendStd(timeout time.Duration) int {
	w.setBody()
	w.timer.Reset(timeout)
	resp, err := w.e.rt.RoundTrip(w.req)
	status := 0
	w.resp = nil
	if err != nil {
		w.fresh()
	} else {
		status = resp.StatusCode
		w.resp = resp.Header
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			status = 0
		}
		_ = resp.Body.Close()
	}
	if !w.timer.Stop() {
		w.renew()
	}
	return status
}
