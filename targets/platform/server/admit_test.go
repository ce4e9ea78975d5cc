package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(msFromT0 float64) {
	c.mu.Lock()
	c.t = at(msFromT0)
	c.mu.Unlock()
}

// reply is one decoded answer.
type reply struct {
	code   int
	hdr    http.Header
	body   platform.ErrorBody
	raw    string
	reason string
}

func do(t *testing.T, method, url string, hdr map[string]string, body any) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return reply{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{code: resp.StatusCode, hdr: resp.Header, raw: string(raw), reason: resp.Header.Get(platform.RejectHeader)}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

// metricsText scrapes s's /metrics.
func metricsText(t *testing.T, base string) string {
	t.Helper()
	return do(t, "GET", base+"/metrics", nil, nil).raw
}

func wantMetric(t *testing.T, text, series string) {
	t.Helper()
	if !strings.Contains(text, series) {
		t.Errorf("/metrics lacks %q", series)
	}
}

func TestDeadlines(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("deadlines %v", on), func(t *testing.T) {
			s := New("test", Config{Workers: 1, QueueTimeout: 10 * time.Second, Deadlines: on}, nil, nil)
			var ran atomic.Int64
			var budget, callerBudget atomic.Int64 // ms, -1: none
			hold := make(chan struct{})
			entered := make(chan struct{}, 4)
			s.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
				ran.Add(1)
				dl, ok := r.Context().Deadline()
				budget.Store(map[bool]int64{true: time.Until(dl).Milliseconds(), false: -1}[ok])
				cb, ok := platform.CallerBudget(r.Context())
				callerBudget.Store(map[bool]int64{true: cb.Milliseconds(), false: -1}[ok])
				_, _ = io.WriteString(w, "ok")
			})
			s.HandleFunc("GET /hold", func(w http.ResponseWriter, r *http.Request) {
				entered <- struct{}{}
				<-hold
			})
			ts := httptest.NewServer(s.Handler())
			defer ts.Close()

			// The budget reaches the handler.
			if r := do(t, "GET", ts.URL+"/work", map[string]string{platform.HeaderDeadline: "5000"}, nil); r.code != 200 {
				t.Fatalf("in-time request: %d %s", r.code, r.raw)
			}
			if b := budget.Load(); on && (b < 4000 || b > 5000) || !on && b != -1 {
				t.Errorf("context deadline in handler = %dms, want ~5000 when on, none (-1) when off", b)
			}
			if cb := callerBudget.Load(); cb < 4000 || cb > 5000 {
				t.Errorf("CallerBudget in handler = %dms, want ~5000 either way", cb)
			}

			// Expired on arrival: not started when on; done (wasted) when off.
			ran.Store(0)
			r := do(t, "GET", ts.URL+"/work", map[string]string{platform.HeaderDeadline: "0"}, nil)
			if on && (r.code != http.StatusGatewayTimeout || r.reason != platform.ReasonDeadline || ran.Load() != 0) {
				t.Errorf("expired on arrival, deadlines on: %d %q, handler ran %d times; want 504 deadline, not run", r.code, r.reason, ran.Load())
			}
			if !on && (r.code != 200 || ran.Load() != 1) {
				t.Errorf("expired on arrival, deadlines off: %d, ran %d; want 200, run once", r.code, ran.Load())
			}

			// Expires while queued behind a held worker.
			ran.Store(0)
			var wg sync.WaitGroup
			wg.Go(func() { do(t, "GET", ts.URL+"/hold", nil, nil) })
			<-entered
			var queued reply
			wg.Go(func() { queued = do(t, "GET", ts.URL+"/work", map[string]string{platform.HeaderDeadline: "50"}, nil) })
			time.Sleep(300 * time.Millisecond)
			close(hold)
			wg.Wait()
			if on && (queued.code != http.StatusGatewayTimeout || queued.reason != platform.ReasonDeadline || ran.Load() != 0) {
				t.Errorf("expired in queue, deadlines on: %d %q ran %d; want 504 deadline, not run", queued.code, queued.reason, ran.Load())
			}
			if !on && (queued.code != 200 || ran.Load() != 1) {
				t.Errorf("expired in queue, deadlines off: %d ran %d; want 200, run", queued.code, ran.Load())
			}
			text := metricsText(t, ts.URL)
			if on {
				wantMetric(t, text, "platform_wasted_work_total 0")
				wantMetric(t, text, `platform_rejected_total{reason="deadline"} 2`)
				wantMetric(t, text, `platform_decisions_total{decision="expired-on-arrival",stage="deadline"} 1`)
			} else {
				wantMetric(t, text, "platform_wasted_work_total 2")
				wantMetric(t, text, `platform_decisions_total{decision="expired-started-anyway",stage="deadline"} 2`)
			}
			if r := do(t, "GET", ts.URL+"/work", map[string]string{platform.HeaderDeadline: "soon"}, nil); r.code != 400 || !strings.Contains(r.body.Error, platform.HeaderDeadline) {
				t.Errorf("bad deadline header: %d %q, want 400 naming %s", r.code, r.body.Error, platform.HeaderDeadline)
			}
		})
	}
}

// TestServerCodelAndBackpressure steps a CoDel server through overload on an
// injected clock: stale requests fail fast with codel, then back pressure.
func TestServerCodelAndBackpressure(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := New("test", Config{Workers: 1, QueueTimeout: 30 * time.Second, Queue: QueueCodel,
		Backpressure: true, Watermark: 1, Clock: clk.Now}, nil, nil)
	holds := map[string]chan struct{}{}
	entered := make(chan string, 8)
	for _, n := range []string{"h", "a", "b", "c", "d"} {
		holds[n] = make(chan struct{})
	}
	s.HandleFunc("GET /{name}", func(w http.ResponseWriter, r *http.Request) {
		n := r.PathValue("name")
		entered <- n
		if ch, ok := holds[n]; ok {
			<-ch
		}
		_, _ = io.WriteString(w, n)
	})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	var mu sync.Mutex
	got := map[string]reply{}
	var wg sync.WaitGroup
	send := func(n string) {
		wg.Go(func() {
			r := do(t, "GET", ts.URL+"/"+n, nil, nil)
			mu.Lock()
			got[n] = r
			mu.Unlock()
		})
	}
	waitQueued := func(n int) {
		for deadline := time.Now().Add(5 * time.Second); s.workers.state().Queued != n; {
			if time.Now().After(deadline) {
				t.Fatalf("queue length %d, want %d", s.workers.state().Queued, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	expectEntered := func(want string) {
		select {
		case n := <-entered:
			if n != want {
				t.Fatalf("handler %q started, want %q", n, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("handler %q never started", want)
		}
	}
	send("h") // t=0: runs at once; delay 0 starts interval 1
	expectEntered("h")
	send("a")
	waitQueued(1)
	send("b")
	waitQueued(2)
	send("c")
	waitQueued(3)
	clk.Set(150) // interval 1 judged healthy (min 0); a goes first (FIFO), waited 150ms
	close(holds["h"])
	expectEntered("a")
	clk.Set(300) // interval 2's min was 150ms: overloaded
	send("d")    // sweeps b and c (waited 300ms > 10ms), then queues
	waitQueued(1)
	send("e") // overloaded and 1 queued ≥ watermark 1: back pressure
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 4 { // h, b, c, e
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("answers so far: %v", got)
		}
	}
	close(holds["a"])
	expectEntered("d")
	close(holds["d"])
	wg.Wait()
	for n, want := range map[string]string{"h": "", "a": "", "b": platform.ReasonCodel, "c": platform.ReasonCodel, "d": "", "e": platform.ReasonBackpressure} {
		r := got[n]
		wantCode := 200
		if want != "" {
			wantCode = 503
		}
		if r.code != wantCode || r.reason != want {
			t.Errorf("%s: %d %q (%s), want %d %q", n, r.code, r.reason, r.raw, wantCode, want)
		}
	}
	if e := got["e"]; e.hdr.Get(platform.HeaderBackpressure) != "1" || e.hdr.Get(platform.HeaderRetryAfter) != "1" {
		t.Errorf("back-pressure answer headers %v, want %s: 1 and %s: 1", e.hdr, platform.HeaderBackpressure, platform.HeaderRetryAfter)
	}
	text := metricsText(t, ts.URL)
	for _, series := range []string{
		`platform_rejected_total{reason="codel"} 2`, `platform_rejected_total{reason="backpressure"} 1`,
		`platform_queue_mode{mode="codel"} 1`, `platform_queue_mode{mode="fifo"} 0`, "platform_queue_overloaded 1",
		`platform_decisions_total{decision="admit-after-wait",stage="queue"} 1`, "platform_queue_wait_seconds_bucket",
	} {
		wantMetric(t, text, series)
	}
}

func TestServerFIFOQueueFull(t *testing.T) {
	s := New("test", Config{Workers: 1, QueueTimeout: 10 * time.Second, Queue: QueueFIFO, QueueLength: 1}, nil, nil)
	hold, entered := make(chan struct{}), make(chan struct{}, 2)
	s.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) { entered <- struct{}{}; <-hold })
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	var wg sync.WaitGroup
	wg.Go(func() { do(t, "GET", ts.URL+"/x", nil, nil) })
	<-entered
	wg.Go(func() { do(t, "GET", ts.URL+"/x", nil, nil) })
	for s.workers.state().Queued != 1 {
		time.Sleep(time.Millisecond)
	}
	r := do(t, "GET", ts.URL+"/x", nil, nil)
	close(hold)
	wg.Wait()
	if r.code != 503 || r.reason != platform.ReasonQueueFull {
		t.Errorf("third request on 1 worker + queue of 1: %d %q, want 503 queue-full", r.code, r.reason)
	}
}

func TestQuotasLocalAndAdmin(t *testing.T) {
	clk := &fakeClock{t: t0}
	s := New("test", Config{Workers: 4, QueueTimeout: time.Second, Quotas: true, Clock: clk.Now,
		Quota: QuotaConfig{Callers: map[string]float64{"rogue": 2}}, AdminToken: "tok"}, nil, nil)
	s.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	count := func(caller string, n int) (ok, limited int, last reply) {
		for range n {
			r := do(t, "GET", ts.URL+"/x", map[string]string{platform.HeaderCaller: caller}, nil)
			switch r.code {
			case 200:
				ok++
			case 429:
				limited++
				last = r
			default:
				t.Fatalf("caller %s: unexpected %d %s", caller, r.code, r.raw)
			}
		}
		return ok, limited, last
	}
	if ok, lim, last := count("rogue", 10); ok != 2 || lim != 8 || last.reason != platform.ReasonQuota ||
		!strings.Contains(last.body.Error, `"rogue"`) || last.hdr.Get(platform.HeaderRetryAfter) != "1" {
		t.Errorf("rogue at 2/s, 10 at once: %d ok %d limited, last %q %s; want 2 ok, 429 quota naming rogue", ok, lim, last.reason, last.raw)
	}
	if ok, _, _ := count("good", 50); ok != 50 {
		t.Errorf("unlisted caller (default unlimited): %d of 50 ok", ok)
	}
	if ok, _, _ := count("", 5); ok != 5 {
		t.Errorf("anonymous caller: %d of 5 ok", ok)
	}
	clk.Set(1000) // a second later: 2 more
	if ok, _, _ := count("rogue", 5); ok != 2 {
		t.Errorf("rogue a second later: %d ok, want 2", ok)
	}

	// Runtime change through the admin endpoint (token required).
	newCfg := QuotaConfig{Default: 1, Callers: map[string]float64{"rogue": 20}}
	if r := do(t, "PUT", ts.URL+"/admin/quotas", nil, newCfg); r.code != 401 {
		t.Errorf("PUT /admin/quotas without token: %d, want 401", r.code)
	}
	auth := map[string]string{"Authorization": "Bearer tok"}
	if r := do(t, "PUT", ts.URL+"/admin/quotas", auth, QuotaConfig{Default: -1}); r.code != 400 || !strings.Contains(r.body.Error, "default") {
		t.Errorf("PUT negative default: %d %q, want 400 naming default", r.code, r.body.Error)
	}
	if r := do(t, "PUT", ts.URL+"/admin/quotas", auth, newCfg); r.code != 200 {
		t.Fatalf("PUT /admin/quotas: %d %s", r.code, r.raw)
	}
	clk.Set(3000)
	count("rogue", 1) // the bucket takes the new rate on its next use
	clk.Set(4500)     // 1.5 s at 20/s refills the (new) burst of 20
	if ok, _, _ := count("rogue", 30); ok != 20 {
		t.Errorf("rogue after raise to 20/s: %d of 30 ok, want 20 (burst)", ok)
	}
	if ok, _, _ := count("good", 5); ok != 1 {
		t.Errorf("unlisted caller after default 1/s: %d of 5 ok, want 1", ok)
	}
	var got QuotaConfig
	if r := do(t, "GET", ts.URL+"/admin/quotas", auth, nil); json.Unmarshal([]byte(r.raw), &got) != nil || got.Callers["rogue"] != 20 {
		t.Errorf("GET /admin/quotas = %s", r.raw)
	}
	text := metricsText(t, ts.URL)
	wantMetric(t, text, `platform_quota_decisions_total{caller="rogue",decision="reject"}`)
	wantMetric(t, text, `platform_quota_decisions_total{caller="other",decision="reject"} 4`)
}

func TestQuotasOff(t *testing.T) {
	s := New("test", Config{Workers: 4, QueueTimeout: time.Second, Quotas: false,
		Quota: QuotaConfig{Default: 1}}, nil, nil)
	s.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for i := range 20 {
		if r := do(t, "GET", ts.URL+"/x", map[string]string{platform.HeaderCaller: "rogue"}, nil); r.code != 200 {
			t.Fatalf("quotas off, request %d: %d", i, r.code)
		}
	}
}

// TestQuotasShadow: the same arrivals (over a second of fake time) through
// an enforcing quota and through a shadow one: shadow mode answers every
// request, and what it counts as would-be rejections is exactly what the
// enforcing server rejected, because a would-be rejection takes no token.
func TestQuotasShadow(t *testing.T) {
	tests := []struct {
		name   string
		shadow []string
	}{
		{"per caller", []string{"rogue"}},
		{"every caller", []string{ShadowAll}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := func(shadow []string) (ok, limited int, m *Metrics) {
				clk := &fakeClock{t: t0}
				m = NewMetrics()
				s := New("test", Config{Workers: 4, QueueTimeout: time.Second, Quotas: true, Clock: clk.Now,
					Quota: QuotaConfig{Callers: map[string]float64{"rogue": 5}, Shadow: shadow}}, m, nil)
				s.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {})
				ts := httptest.NewServer(s.Handler())
				defer ts.Close()
				for i := range 60 { // 60 requests over 1.2 s: 20 ms apart, at 5/s allowed
					clk.Set(float64(20 * i))
					switch r := do(t, "GET", ts.URL+"/x", map[string]string{platform.HeaderCaller: "rogue"}, nil); r.code {
					case 200:
						ok++
					case 429:
						limited++
					default:
						t.Fatalf("request %d: %d %s", i, r.code, r.raw)
					}
				}
				return ok, limited, m
			}
			_, rejected, _ := run(nil)
			ok, limited, m := run(tt.shadow)
			would := value(t, m.server.ShadowRejections.WithLabelValues(limitQuota, "rogue", shadowOverQuota))
			if ok != 60 || limited != 0 {
				t.Errorf("shadow: %d ok, %d limited; want all 60 ok", ok, limited)
			}
			if rejected < 40 || would != float64(rejected) {
				t.Errorf("shadow counted %v would-be rejections, enforcing rejected %d; want equal (and most)", would, rejected)
			}
			if got := value(t, m.server.QuotaDecisions.WithLabelValues("rogue", "would-reject")); got != would {
				t.Errorf("quota decisions would-reject = %v, want %v", got, would)
			}
		})
	}
}

// listServer serves GET /list behind a bulkhead "list" of limit 1 in mode:
// each call says it entered, then waits until hold is closed.
func listServer(t *testing.T, mode BulkheadMode) (ts *httptest.Server, hold, entered chan struct{}) {
	m := NewMetrics()
	s := New("test", Config{Workers: 8, QueueTimeout: time.Second}, m, nil)
	bh := NewBulkheadMode("list", 1, mode, 0, m)
	hold, entered = make(chan struct{}), make(chan struct{}, 4)
	s.HandleWith("GET /list", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { entered <- struct{}{}; <-hold }),
		RouteOptions{Bulkhead: bh})
	ts = httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, hold, entered
}

// TestAPIBulkheadAndResize: a per-API bulkhead fails fast when full, and the
// admin endpoint resizes it at runtime.
func TestAPIBulkheadAndResize(t *testing.T) {
	ts, hold, entered := listServer(t, BulkheadHard)
	var wg sync.WaitGroup
	wg.Go(func() { do(t, "GET", ts.URL+"/list", nil, nil) })
	<-entered
	if r := do(t, "GET", ts.URL+"/list", nil, nil); r.code != 503 || r.reason != platform.ReasonBulkhead || !strings.Contains(r.body.Error, "list") {
		t.Errorf("second call over limit 1: %d %q %q, want 503 bulkhead naming list", r.code, r.reason, r.body.Error)
	}
	if r := do(t, "PUT", ts.URL+"/admin/bulkheads/list", nil, bulkheadResize{Limit: 2}); r.code != 200 {
		t.Fatalf("resize: %d %s", r.code, r.raw)
	}
	wg.Go(func() { do(t, "GET", ts.URL+"/list", nil, nil) })
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("call after resize to 2 was not admitted")
	}
	for _, tc := range []struct {
		path string
		body any
		code int
		want string
	}{
		{"/admin/bulkheads/nope", bulkheadResize{Limit: 2}, 404, "known: list"},
		{"/admin/bulkheads/list", bulkheadResize{Limit: 0}, 400, "at least 1"},
		{"/admin/bulkheads/list", map[string]any{"limit": 2, "extra": 1}, 400, "unknown field"},
	} {
		if r := do(t, "PUT", ts.URL+tc.path, nil, tc.body); r.code != tc.code || !strings.Contains(r.body.Error, tc.want) {
			t.Errorf("PUT %s %v: %d %q, want %d containing %q", tc.path, tc.body, r.code, r.body.Error, tc.code, tc.want)
		}
	}
	close(hold)
	wg.Wait()
	text := metricsText(t, ts.URL)
	wantMetric(t, text, `platform_bulkhead_limit{bulkhead="list"} 2`)
	wantMetric(t, text, `platform_bulkhead_decisions_total{bulkhead="list",decision="reject"} 1`)
	wantMetric(t, text, `platform_rejected_total{reason="bulkhead"} 1`)
	if r := do(t, "GET", ts.URL+"/admin/bulkheads", nil, nil); !strings.Contains(r.raw, `"name":"list","limit":2`) {
		t.Errorf("GET /admin/bulkheads = %s", r.raw)
	}
}

// TestAPIBulkheadShadowThenEnforce: a bulkhead deployed in shadow mode lets
// every call through and reports the ones it would have rejected; switched to
// hard through the admin endpoint it rejects them.
func TestAPIBulkheadShadowThenEnforce(t *testing.T) {
	ts, hold, entered := listServer(t, BulkheadShadow)
	var wg sync.WaitGroup
	for range 2 { // two at once over a limit of 1: both run
		wg.Go(func() { do(t, "GET", ts.URL+"/list", nil, nil) })
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatal("a call through the shadow bulkhead did not run")
		}
	}
	text := metricsText(t, ts.URL)
	wantMetric(t, text, `platform_shadow_rejections_total{limit="bulkhead",name="list",reason="full"} 1`)
	wantMetric(t, text, `platform_bulkhead_decisions_total{bulkhead="list",decision="would-reject"} 1`)
	if r := do(t, "GET", ts.URL+"/admin/bulkheads", nil, nil); !strings.Contains(r.raw, `"inflight":2,"mode":"shadow"`) {
		t.Errorf("GET /admin/bulkheads = %s", r.raw)
	}
	if r := do(t, "PUT", ts.URL+"/admin/bulkheads/list", nil, bulkheadResize{Mode: "enforce"}); r.code != 400 || !strings.Contains(r.body.Error, "want hard, shadow or off") {
		t.Errorf("PUT mode enforce: %d %q, want 400 naming the modes", r.code, r.body.Error)
	}
	if r := do(t, "PUT", ts.URL+"/admin/bulkheads/list", nil, bulkheadResize{Mode: "hard"}); r.code != 200 || !strings.Contains(r.raw, `"limit":1,"inflight":2,"mode":"hard"`) {
		t.Fatalf("PUT mode hard: %d %s", r.code, r.raw)
	}
	if r := do(t, "GET", ts.URL+"/list", nil, nil); r.code != 503 || r.reason != platform.ReasonBulkhead {
		t.Errorf("call after switching to hard: %d %q, want 503 bulkhead", r.code, r.reason)
	}
	close(hold)
	wg.Wait()
}
