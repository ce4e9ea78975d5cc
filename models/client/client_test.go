package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when sleeping or when an attempt takes time.
type fakeClock struct {
	t      time.Time
	sleeps []time.Duration
}

func (f *fakeClock) now() time.Time { return f.t }

func (f *fakeClock) sleep(_ context.Context, d time.Duration) error {
	f.sleeps = append(f.sleeps, d)
	f.t = f.t.Add(d)
	return nil
}

// testClient returns a client of cfg on a fake clock.
func testClient(t *testing.T, cfg Config) (*Client, *fakeClock) {
	t.Helper()
	c, err := New(cfg, 42)
	if err != nil {
		t.Fatal(err)
	}
	fc := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	c.now, c.sleep = fc.now, fc.sleep
	return c, fc
}

// transport answers attempts from a fixed list of outcomes (the last repeats),
// each taking latency on the fake clock.
func transport(fc *fakeClock, latency time.Duration, outs ...Outcome) (AttemptFunc, *int) {
	calls := 0
	return func(n int, _ time.Duration) (Outcome, error) {
		o := outs[min(calls, len(outs)-1)]
		calls++
		fc.t = fc.t.Add(latency)
		return o, nil
	}, &calls
}

var (
	bp      = Outcome{Status: 503, BackPressure: true}
	plain5  = Outcome{Status: 502}
	ok200   = Outcome{Status: 200}
	notRetr = Outcome{Status: 404}
	noAns   = Outcome{Status: 0}
)

func TestRetryDecisions(t *testing.T) {
	tests := []struct {
		name         string
		model        string
		outs         []Outcome
		wantAttempts int
		wantOK       bool
		wantReason   string
		wantBP       int
	}{
		{"naive retries back pressure 3 times", ModelNaive, []Outcome{bp}, 4, false, "exhausted", 4},
		{"naive stops on success", ModelNaive, []Outcome{plain5, ok200}, 2, true, "ok", 0},
		{"naive does not retry 404", ModelNaive, []Outcome{notRetr}, 1, false, "not-retryable", 0},
		{"naive retries no answer", ModelNaive, []Outcome{noAns}, 4, false, "exhausted", 0},
		{"backoff retries 502", ModelBackoff, []Outcome{plain5}, 4, false, "exhausted", 0},
		{"backoff retries back pressure", ModelBackoff, []Outcome{bp, ok200}, 2, true, "ok", 1},
		{"smart never retries back pressure", ModelSmart, []Outcome{bp}, 1, false, "backpressure", 1},
		{"budgeted with empty budget does not retry", ModelBudgeted, []Outcome{plain5}, 1, false, "budget", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Defaults(tt.model)
			c, fc := testClient(t, cfg)
			fn, calls := transport(fc, time.Millisecond, tt.outs...)
			res, err := c.Do(context.Background(), fn)
			if err != nil {
				t.Fatal(err)
			}
			if res.Attempts != tt.wantAttempts || *calls != tt.wantAttempts || res.OK != tt.wantOK || res.Reason != tt.wantReason || res.BackPressure != tt.wantBP {
				t.Errorf("got attempts %d (calls %d) ok %v reason %q bp %d; want %d %v %q %d",
					res.Attempts, *calls, res.OK, res.Reason, res.BackPressure, tt.wantAttempts, tt.wantOK, tt.wantReason, tt.wantBP)
			}
			if res.Retries != res.Attempts-1 {
				t.Errorf("retries %d, want attempts-1 = %d", res.Retries, res.Attempts-1)
			}
			if res.GaveUp == res.OK {
				t.Errorf("gave up %v with ok %v", res.GaveUp, res.OK)
			}
			if tt.model == ModelNaive && len(fc.sleeps) != 0 {
				t.Errorf("naive slept %v", fc.sleeps)
			}
		})
	}
}

func TestBackoffFullJitter(t *testing.T) {
	cfg := Defaults(ModelBackoff)
	cfg.Retries = 6
	cfg.Base, cfg.Cap = 100*time.Millisecond, 1*time.Second
	c, fc := testClient(t, cfg)
	var per [6][]time.Duration
	for range 400 {
		fc.sleeps = nil
		fn, _ := transport(fc, 0, plain5)
		if _, err := c.Do(context.Background(), fn); err != nil {
			t.Fatal(err)
		}
		if len(fc.sleeps) != 6 {
			t.Fatalf("slept %d times, want 6", len(fc.sleeps))
		}
		for i, d := range fc.sleeps {
			per[i] = append(per[i], d)
		}
	}
	for i, ds := range per {
		ceil := min(cfg.Cap, cfg.Base<<i)
		var sum time.Duration
		for _, d := range ds {
			if d < 0 || d >= ceil {
				t.Fatalf("retry %d slept %s, want [0, %s)", i+1, d, ceil)
			}
			sum += d
		}
		// Full jitter: the mean is ceil/2; 400 draws put it within ±15%.
		mean := sum / time.Duration(len(ds))
		if mean < ceil*35/100 || mean > ceil*65/100 {
			t.Errorf("retry %d: mean pause %s, want about %s", i+1, mean, ceil/2)
		}
	}
}

func TestBudgetAccounting(t *testing.T) {
	cfg := Defaults(ModelBudgeted)
	cfg.BudgetRatio = 0.2
	cfg.Base = 0
	c, fc := testClient(t, cfg)
	var requests, retries int
	for i := range 500 {
		fn, _ := transport(fc, 0, plain5)
		res, err := c.Do(context.Background(), fn)
		if err != nil {
			t.Fatal(err)
		}
		requests++
		retries += res.Retries
		if i%50 == 49 { // within one 10 s window: the ratio holds at every point
			if float64(retries) > 0.2*float64(requests)+1e-9 {
				t.Fatalf("after %d requests: %d retries, over 20%%", requests, retries)
			}
		}
	}
	if float64(retries) < 0.19*float64(requests) {
		t.Errorf("%d retries of %d requests: the budget should be spent (about 20%%)", retries, requests)
	}
	// The window slides: after 11 s the old requests no longer pay for retries.
	fc.t = fc.t.Add(11 * time.Second)
	fn, _ := transport(fc, 0, plain5)
	res, _ := c.Do(context.Background(), fn)
	if res.Retries != 0 || res.Reason != "budget" {
		t.Errorf("fresh window: retries %d reason %q, want 0 and budget", res.Retries, res.Reason)
	}
}

func TestSmartBreaker(t *testing.T) {
	cfg := Defaults(ModelSmart)
	cfg.BreakerFailures = 3
	cfg.BreakerCooldown = 2 * time.Second
	c, fc := testClient(t, cfg)
	do := func(outs ...Outcome) Result {
		fn, _ := transport(fc, time.Millisecond, outs...)
		r, err := c.Do(context.Background(), fn)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for i := range 3 {
		if r := do(bp); r.Attempts != 1 || r.Rejected {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
	if s := c.BreakerState(fc.t); s != "open" {
		t.Fatalf("after 3 failures the breaker is %s, want open", s)
	}
	if r := do(ok200); !r.Rejected || r.Attempts != 0 || !r.GaveUp || r.Reason != "breaker" {
		t.Fatalf("open breaker let a request through: %+v", r)
	}
	fc.t = fc.t.Add(2 * time.Second)
	if r := do(bp); r.Rejected || r.Attempts != 1 {
		t.Fatalf("half-open probe: %+v", r)
	}
	if s := c.BreakerState(fc.t); s != "open" {
		t.Fatalf("failed probe: breaker %s, want open again", s)
	}
	fc.t = fc.t.Add(2 * time.Second)
	if r := do(ok200); !r.OK {
		t.Fatalf("probe after cooldown: %+v", r)
	}
	if s := c.BreakerState(fc.t); s != "closed" {
		t.Fatalf("successful probe: breaker %s, want closed", s)
	}
	// Retry-After longer than the cooldown keeps the breaker open longer.
	for range 3 {
		do(Outcome{Status: 503, BackPressure: true, RetryAfter: 10 * time.Second})
	}
	fc.t = fc.t.Add(5 * time.Second)
	if s := c.BreakerState(fc.t); s != "open" {
		t.Errorf("Retry-After 10s: breaker %s after 5s, want open", s)
	}
}

func TestSmartRetriesOtherFailures(t *testing.T) {
	c, fc := testClient(t, Defaults(ModelSmart))
	// Fill the budget with successful requests first.
	for range 100 {
		fn, _ := transport(fc, 0, ok200)
		c.Do(context.Background(), fn)
	}
	fn, calls := transport(fc, 0, plain5, plain5, ok200)
	res, _ := c.Do(context.Background(), fn)
	if !res.OK || *calls != 3 || len(fc.sleeps) != 2 {
		t.Errorf("smart on 502, 502, 200: ok %v after %d calls and %d pauses; want ok after 3 calls, 2 pauses", res.OK, *calls, len(fc.sleeps))
	}
}

func TestDeadlineAndGoodput(t *testing.T) {
	cfg := Defaults(ModelBackoff)
	cfg.Deadline = 300 * time.Millisecond
	cfg.Base, cfg.Cap = 10*time.Millisecond, 10*time.Millisecond
	c, fc := testClient(t, cfg)
	// Each attempt takes 120 ms: the third starts at ~250 ms and ends after the deadline.
	var remaining []time.Duration
	calls := 0
	res, err := c.Do(context.Background(), func(n int, rem time.Duration) (Outcome, error) {
		remaining = append(remaining, rem)
		calls++
		fc.t = fc.t.Add(120 * time.Millisecond)
		if calls == 3 {
			return ok200, nil
		}
		return plain5, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Goodput {
		t.Errorf("ok %v goodput %v: a success after the deadline is not goodput", res.OK, res.Goodput)
	}
	if remaining[0] != 300*time.Millisecond || remaining[1] >= remaining[0] {
		t.Errorf("remaining per attempt %v: want 300ms then less", remaining)
	}
	fn, _ := transport(fc, 200*time.Millisecond, plain5)
	res, _ = c.Do(context.Background(), fn)
	if res.Reason != "deadline" || res.Attempts != 2 {
		t.Errorf("200 ms attempts under a 300 ms deadline: %d attempts, reason %q; want 2, deadline", res.Attempts, res.Reason)
	}
	fn, _ = transport(fc, 10*time.Millisecond, ok200)
	if res, _ = c.Do(context.Background(), fn); !res.Goodput {
		t.Errorf("fast success is not goodput: %+v", res)
	}
}

// TestAmplification checks attempts per logical request against a server
// that always answers back pressure, the k6 script test's premise.
func TestAmplification(t *testing.T) {
	for _, tt := range []struct {
		model    string
		min, max float64
	}{
		{ModelNaive, 4, 4},
		{ModelBackoff, 4, 4},
		{ModelBudgeted, 1, 1.11},
		{ModelSmart, 0, 1},
	} {
		c, fc := testClient(t, Defaults(tt.model))
		attempts := 0
		const n = 1000
		for range n {
			fn, _ := transport(fc, 5*time.Millisecond, bp)
			r, _ := c.Do(context.Background(), fn)
			attempts += r.Attempts
		}
		amp := float64(attempts) / n
		if amp < tt.min || amp > tt.max {
			t.Errorf("%s: amplification %.3f, want [%v, %v]", tt.model, amp, tt.min, tt.max)
		}
	}
}

func TestAttemptError(t *testing.T) {
	c, _ := testClient(t, Defaults(ModelNaive))
	boom := errors.New("boom")
	res, err := c.Do(context.Background(), func(int, time.Duration) (Outcome, error) { return Outcome{}, boom })
	if !errors.Is(err, boom) || res.Attempts != 1 || !res.GaveUp {
		t.Errorf("got %+v, %v", res, err)
	}
}

func TestClassify(t *testing.T) {
	rule := Defaults(ModelSmart).Backpressure
	tests := []struct {
		status  int
		headers map[string]string
		want    Outcome
	}{
		{503, map[string]string{"X-Backpressure": "1"}, Outcome{Status: 503, BackPressure: true}},
		{503, map[string]string{"Retry-After": "3"}, Outcome{Status: 503, BackPressure: true, RetryAfter: 3 * time.Second}},
		{429, map[string]string{"Retry-After": "1"}, Outcome{Status: 429, BackPressure: true, RetryAfter: time.Second}},
		{503, nil, Outcome{Status: 503}},
		{503, map[string]string{"X-Backpressure": "0"}, Outcome{Status: 503}},
		{500, map[string]string{"X-Backpressure": "1"}, Outcome{Status: 500}},
		{503, map[string]string{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, Outcome{Status: 503, BackPressure: true}},
		{200, map[string]string{"Retry-After": "1"}, Outcome{Status: 200}},
	}
	for _, tt := range tests {
		got := rule.Classify(tt.status, func(k string) string { return tt.headers[k] })
		if got != tt.want {
			t.Errorf("Classify(%d, %v) = %+v, want %+v", tt.status, tt.headers, got, tt.want)
		}
	}
	noRA := rule
	noRA.RetryAfter = false
	if got := noRA.Classify(503, func(k string) string { return map[string]string{"Retry-After": "2"}[k] }); got.BackPressure {
		t.Errorf("retryAfter off: %+v is back pressure", got)
	}
}

func TestConfigValidate(t *testing.T) {
	mod := func(f func(*Config)) Config { c := Defaults(ModelSmart); f(&c); return c }
	tests := []struct {
		cfg  Config
		want string
	}{
		{Defaults("eager"), "allowed: naive, backoff, budgeted, smart"},
		{mod(func(c *Config) { c.Retries = -1 }), "retries -1"},
		{mod(func(c *Config) { c.BudgetRatio = -0.5 }), "budget ratio"},
		{mod(func(c *Config) { c.BudgetWindow = time.Millisecond }), "budget window"},
		{mod(func(c *Config) { c.BreakerFailures = 0 }), "breaker failures"},
		{mod(func(c *Config) { c.Deadline = -time.Second }), "deadline"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want an error with %q", tt.cfg, err, tt.want)
		}
	}
	for _, m := range Models {
		if err := Defaults(m).Validate(); err != nil {
			t.Errorf("defaults of %s: %v", m, err)
		}
	}
}
