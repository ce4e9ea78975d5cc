package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// answer is what the fake transport gives one attempt: an error, or a status
// with headers.
type answer struct {
	status int
	header map[string]string
	err    error
}

var (
	okAnswer    = answer{status: 200}
	answer502   = answer{status: 502}
	answer500   = answer{status: 500}
	answer409   = answer{status: 409}
	bpAnswer    = answer{status: 503, header: map[string]string{platform.HeaderBackpressure: "1", platform.HeaderRetryAfter: "2"}}
	answer503   = answer{status: 503}
	connRefused = answer{err: errors.New("connection connRefused")}
)

// fakeTransport answers each attempt from a script (the last answer repeats)
// and records the requests per host.
type fakeTransport struct {
	mu      sync.Mutex
	script  []answer
	n       int
	perHost map[string]int
	headers []http.Header
}

func (f *fakeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	a := f.script[min(f.n, len(f.script)-1)]
	f.n++
	if f.perHost == nil {
		f.perHost = map[string]int{}
	}
	f.perHost[r.URL.Host]++
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	if a.err != nil {
		return nil, a.err
	}
	h := http.Header{}
	for k, v := range a.header {
		h.Set(k, v)
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
}

func (f *fakeTransport) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// quickConfig is the default config with no backoff wait, no budget and no
// breaker, balancing round robin (so that retries' hosts are known).
func quickConfig(mode string, retries int) Config {
	c := DefaultConfig()
	c.Balancer = balanceRoundRobin
	c.RetryMode, c.Retries = mode, retries
	c.RetryBackoff, c.RetryBackoffMax = 0, 0
	c.RetryBudget = 0
	c.Breaker = false
	c.Outlier.Enabled = false
	return c
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		name         string
		de           DepError
		smart, naive bool
	}{
		{"connection error", DepError{Kind: KindUnavailable}, true, true},
		{"timeout", DepError{Kind: KindTimeout}, true, true},
		{"502", DepError{Kind: KindStatus, Status: 502}, true, true},
		{"504", DepError{Kind: KindStatus, Status: 504}, true, true},
		{"503 without back pressure", DepError{Kind: KindStatus, Status: 503}, true, true},
		{"503 back pressure", DepError{Kind: KindStatus, Status: 503, Backpressure: true}, false, true},
		{"500", DepError{Kind: KindStatus, Status: 500}, false, true},
		{"409", DepError{Kind: KindStatus, Status: 409}, false, false},
		{"canceled", DepError{Kind: KindCanceled}, false, false},
		{"deadline", DepError{Kind: KindDeadline}, false, false},
		{"breaker", DepError{Kind: KindBreaker}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryable(retrySmart, true, &tt.de); got != tt.smart {
				t.Errorf("smart = %v, want %v", got, tt.smart)
			}
			if got := retryable(retryNaive, true, &tt.de); got != tt.naive {
				t.Errorf("naive = %v, want %v", got, tt.naive)
			}
			if retryable(retryOff, true, &tt.de) && tt.de.Kind != KindUnavailable {
				t.Error("off mode retries")
			}
		})
	}
	if retryable(retrySmart, false, &DepError{Kind: KindTimeout}) {
		t.Error("smart mode with --retry-timeouts off retries a timeout")
	}
}

func TestFullJitter(t *testing.T) {
	base, maxD := 10*time.Millisecond, 100*time.Millisecond
	tests := []struct {
		n    int
		u    float64
		want time.Duration
	}{
		{1, 0, 0},
		{1, 0.5, 5 * time.Millisecond},
		{2, 0.5, 10 * time.Millisecond},
		{3, 0.5, 20 * time.Millisecond},
		{5, 0.5, 50 * time.Millisecond}, // 160ms capped at 100ms
		{30, 0.5, 50 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := fullJitter(base, maxD, tt.n, tt.u); got < tt.want-time.Microsecond || got > tt.want+time.Microsecond {
			t.Errorf("fullJitter(retry %d, u=%g) = %s, want %s", tt.n, tt.u, got, tt.want)
		}
	}
	if got := fullJitter(0, maxD, 3, 0.9); got != 0 {
		t.Errorf("no backoff: %s", got)
	}
}

func TestClientRetryDecisions(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		script   []answer
		attempts int
		kind     ErrKind // 0: success
		backpr   bool
	}{
		{"smart retries a 502", retrySmart, []answer{answer502, okAnswer}, 2, 0, false},
		{"smart retries a plain 503", retrySmart, []answer{answer503, okAnswer}, 2, 0, false},
		{"smart retries a connRefused connection up to --retries", retrySmart, []answer{connRefused}, 3, KindUnavailable, false},
		{"smart never retries back pressure", retrySmart, []answer{bpAnswer, okAnswer}, 1, KindStatus, true},
		{"smart does not retry a 500", retrySmart, []answer{answer500, okAnswer}, 1, KindStatus, false},
		{"smart does not retry a 409", retrySmart, []answer{answer409, okAnswer}, 1, KindStatus, false},
		{"naive retries back pressure", retryNaive, []answer{bpAnswer}, 3, KindStatus, true},
		{"naive retries a 500", retryNaive, []answer{answer500, answer500, okAnswer}, 3, 0, false},
		{"off makes one attempt", retryOff, []answer{answer502, okAnswer}, 1, KindStatus, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTransport{script: tt.script}
			c, err := New("dep", []string{"a:1", "b:1"}, time.Second, WithConfig(quickConfig(tt.mode, 2)), withTransport(ft))
			if err != nil {
				t.Fatal(err)
			}
			err = c.GetJSON(context.Background(), "/x", nil)
			if got := KindOf(err); got != tt.kind {
				t.Fatalf("kind = %v (%v), want %v", got, err, tt.kind)
			}
			if ft.count() != tt.attempts {
				t.Errorf("attempts = %d, want %d", ft.count(), tt.attempts)
			}
			if isBackpressure(err) != tt.backpr {
				t.Errorf("IsBackpressure = %v, want %v", isBackpressure(err), tt.backpr)
			}
			var de *DepError
			if errors.As(err, &de) && de.Attempts != tt.attempts {
				t.Errorf("DepError.Attempts = %d, want %d", de.Attempts, tt.attempts)
			}
			if tt.backpr && de.RetryAfter != 2*time.Second {
				t.Errorf("RetryAfter = %s, want 2s", de.RetryAfter)
			}
		})
	}
}

func TestClientRetryGoesToAnotherReplica(t *testing.T) {
	ft := &fakeTransport{script: []answer{answer502, okAnswer}}
	c, _ := New("dep", []string{"a:1", "b:1", "c:1"}, time.Second, WithConfig(quickConfig(retrySmart, 2)), withTransport(ft))
	for range 6 {
		ft.n = 0
		if err := c.GetJSON(context.Background(), "/x", nil); err != nil {
			t.Fatal(err)
		}
	}
	for h, n := range ft.perHost {
		if n != 4 {
			t.Errorf("host %s got %d attempts of 12, want 4 (retries rotate)", h, n)
		}
	}
}

// TestClientRetryBudgetBoundsAmplification: every attempt fails with a 502;
// naive retries triple the load, smart retries add at most the budget's 10%.
func TestClientRetryBudgetBoundsAmplification(t *testing.T) {
	tests := []struct {
		mode    string
		budget  float64
		maxLoad int // attempts for 200 calls
		minLoad int
	}{
		{retrySmart, 0.1, 220, 200},
		{retrySmart, 0, 600, 600}, // no budget: every call retries twice
		{retryNaive, 0.1, 600, 600},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			cfg := quickConfig(tt.mode, 2)
			cfg.RetryBudget, cfg.RetryBudgetMin = tt.budget, 0
			ft := &fakeTransport{script: []answer{answer502}}
			reg := prometheus.NewRegistry()
			c, _ := New("ledger", []string{"a:1"}, time.Second, WithConfig(cfg), withTransport(ft), WithRegisterer(reg))
			for range 200 {
				_ = c.GetJSON(context.Background(), "/x", nil)
			}
			if n := ft.count(); n < tt.minLoad || n > tt.maxLoad {
				t.Errorf("attempts for 200 calls = %d, want %d..%d", n, tt.minLoad, tt.maxLoad)
			}
			retries := metricValue(t, c.m.retries)
			denied := metricValue(t, c.m.retriesDenied)
			if int(retries)+200 != ft.count() {
				t.Errorf("platform_client_retries_total = %g, want attempts-calls = %d", retries, ft.count()-200)
			}
			if tt.mode == retrySmart && tt.budget > 0 && denied < 100 {
				t.Errorf("platform_client_retries_denied_total = %g, want most retries denied", denied)
			}
		})
	}
}

func TestClientDeadlinePropagation(t *testing.T) {
	deadline := func(d time.Duration) (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), d)
	}
	tests := []struct {
		name      string
		propagate bool
		budget    time.Duration // 0: no deadline
		min, max  int64         // X-Deadline-Ms range; -1: header absent
	}{
		{"deadline shorter than timeout", true, 300 * time.Millisecond, 200, 300},
		{"timeout shorter than deadline", true, 5 * time.Second, 1000, 1000},
		{"no deadline: the timeout", true, 0, 1000, 1000},
		{"off: the caller's budget, unclipped", false, 5 * time.Second, 4000, 5000},
		{"off without deadline: no header", false, 0, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := quickConfig(retryOff, 0)
			cfg.PropagateDeadline = tt.propagate
			ft := &fakeTransport{script: []answer{okAnswer}}
			c, _ := New("dep", []string{"a:1"}, time.Second, WithConfig(cfg), withTransport(ft))
			ctx := context.Background()
			if tt.budget > 0 {
				var cancel context.CancelFunc
				ctx, cancel = deadline(tt.budget)
				defer cancel()
			}
			if err := c.GetJSON(ctx, "/x", nil); err != nil {
				t.Fatal(err)
			}
			v := ft.headers[0].Get(platform.HeaderDeadline)
			if tt.min < 0 {
				if v != "" {
					t.Errorf("%s = %q, want none", platform.HeaderDeadline, v)
				}
				return
			}
			var ms int64
			if _, err := fmtSscan(v, &ms); err != nil || ms < tt.min || ms > tt.max {
				t.Errorf("%s = %q, want %d..%d", platform.HeaderDeadline, v, tt.min, tt.max)
			}
		})
	}
}

func TestClientNeverStartsWithoutBudget(t *testing.T) {
	ft := &fakeTransport{script: []answer{okAnswer}}
	c, _ := New("dep", []string{"a:1"}, time.Second, WithConfig(quickConfig(retrySmart, 2)), withTransport(ft))
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	err := c.GetJSON(ctx, "/x", nil)
	if KindOf(err) != KindDeadline || ft.count() != 0 {
		t.Errorf("expired deadline: kind %v, %d attempts; want deadline, 0", KindOf(err), ft.count())
	}
	// with propagation off the call is made (and counts as wasted work downstream)
	cfg := quickConfig(retrySmart, 2)
	cfg.PropagateDeadline = false
	c, _ = New("dep", []string{"a:1"}, time.Second, WithConfig(cfg), withTransport(ft))
	_ = c.GetJSON(context.WithoutCancel(ctx), "/x", nil)
	if ft.count() != 1 {
		t.Errorf("propagation off: %d attempts, want 1", ft.count())
	}
}

func fmtSscan(s string, v *int64) (int, error) { return fmt.Sscan(s, v) }

// metricValue reads a counter's or gauge's current value.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatalf("read metric: %v", err)
	}
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}
