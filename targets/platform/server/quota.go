package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// anonymousCaller is the caller name of requests without HeaderCaller.
const anonymousCaller = "anonymous"

// QuotaConfig is every caller's rate quota in requests per second. A rate of
// 0 means unlimited. It is the JSON body of PUT /admin/quotas.
type QuotaConfig struct {
	// Default applies to callers not listed.
	Default float64 `json:"default"`
	// Callers maps a caller (HeaderCaller) to its rate.
	Callers map[string]float64 `json:"callers"`
	// Shadow lists the callers whose quota is in shadow mode (instrumentation
	// only): what it would reject is counted and let through. "*" is every
	// caller. A rejection is not taken from the counter, so the count is what
	// enforcing would have rejected.
	Shadow []string `json:"shadow,omitempty"`
}

// ShadowAll in QuotaConfig.Shadow puts every caller's quota in shadow mode.
const ShadowAll = "*"

// shadowFor says whether caller's quota only counts what it would reject.
func (c QuotaConfig) shadowFor(caller string) bool {
	return slices.Contains(c.Shadow, caller) || slices.Contains(c.Shadow, ShadowAll)
}

// rateFor is caller's rate (0: unlimited).
func (c QuotaConfig) rateFor(caller string) float64 {
	if r, ok := c.Callers[caller]; ok {
		return r
	}
	return c.Default
}

// validate checks every rate is finite and not negative.
func (c QuotaConfig) validate() error {
	check := func(where string, r float64) error {
		if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
			return fmt.Errorf("quota %s: rate %v: want requests per second ≥ 0 (0: unlimited)", where, r)
		}
		return nil
	}
	if err := check("default", c.Default); err != nil {
		return err
	}
	for name, r := range c.Callers {
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("quota: empty caller name; name callers as in header %s", platform.HeaderCaller)
		}
		if err := check("for caller "+name, r); err != nil {
			return err
		}
	}
	for _, name := range c.Shadow {
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("quota shadow: empty caller name; name callers as in header %s, or %s for all", platform.HeaderCaller, ShadowAll)
		}
	}
	return nil
}

func (c QuotaConfig) clone() QuotaConfig {
	out := QuotaConfig{Default: c.Default, Callers: make(map[string]float64, len(c.Callers)), Shadow: slices.Clone(c.Shadow)}
	for k, v := range c.Callers {
		out.Callers[k] = v
	}
	return out
}

// quotaBurst is the burst a rate allows: one second's worth, at least 1.
func quotaBurst(r float64) int { return max(1, int(math.Ceil(r))) }

// quotaCounter counts a caller's requests against a rate. Local counts in this
// process; Redis counts across every replica sharing the Redis.
type quotaCounter interface {
	// take takes one request for caller at rate r (> 0) and burst; when refused it
	// says how long until one would be allowed.
	take(ctx context.Context, caller string, r float64, burst int) (ok bool, retryAfter time.Duration, err error)
}

// maxLocalCallers bounds how many callers' buckets a LocalQuota keeps: a
// flood of made-up caller names evicts the least recently seen instead of
// growing memory without bound.
const maxLocalCallers = 10_000

// localQuota is a QuotaCounter of token buckets (golang.org/x/time/rate) in this process.
type localQuota struct {
	mu  sync.Mutex
	now func() time.Time
	lim *lru.Cache[string, *rate.Limiter]
}

// newLocalQuota returns a local counter; now is the clock (nil: time.Now).
func newLocalQuota(now func() time.Time) *localQuota {
	if now == nil {
		now = time.Now
	}
	lim, _ := lru.New[string, *rate.Limiter](maxLocalCallers)
	return &localQuota{now: now, lim: lim}
}

// take implements QuotaCounter.
func (q *localQuota) take(_ context.Context, caller string, r float64, burst int) (bool, time.Duration, error) {
	now := q.now()
	q.mu.Lock()
	l, ok := q.lim.Get(caller)
	if !ok {
		l = rate.NewLimiter(rate.Limit(r), burst)
		q.lim.Add(caller, l)
	} else if float64(l.Limit()) != r || l.Burst() != burst {
		l.SetLimitAt(now, rate.Limit(r))
		l.SetBurstAt(now, burst)
	}
	q.mu.Unlock()
	if l.AllowN(now, 1) {
		return true, 0, nil
	}
	return false, time.Duration(float64(time.Second) / r), nil
}

// quotaDecision is the answer of Quotas.Check.
type quotaDecision struct {
	Allowed bool
	Caller  string
	Rate    float64 // 0: unlimited
	// Shadow: the caller's quota is in shadow mode; a refusal is only counted.
	Shadow     bool
	RetryAfter time.Duration
	Err        error // the counter failed; the request was let through (fail open)
}

// quotas applies per-caller rate quotas whose config can change at runtime.
type quotas struct {
	mu      sync.RWMutex
	cfg     QuotaConfig
	counter quotaCounter
}

// newQuotas returns quotas with cfg counted by counter.
func newQuotas(cfg QuotaConfig, counter quotaCounter) (*quotas, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &quotas{cfg: cfg.clone(), counter: counter}, nil
}

// config returns a copy of the current config.
func (q *quotas) config() QuotaConfig {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.cfg.clone()
}

// listed says whether caller has its own quota (not the default).
func (q *quotas) listed(caller string) bool {
	q.mu.RLock()
	defer q.mu.RUnlock()
	_, ok := q.cfg.Callers[caller]
	return ok
}

// setConfig replaces the config; it takes effect for the next request.
func (q *quotas) setConfig(cfg QuotaConfig) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	q.mu.Lock()
	q.cfg = cfg.clone()
	q.mu.Unlock()
	return nil
}

// check takes one request of caller ("" is AnonymousCaller) against its quota.
// A failing counter lets the request through and reports Err (fail open).
func (q *quotas) check(ctx context.Context, caller string) quotaDecision {
	if caller == "" {
		caller = anonymousCaller
	}
	q.mu.RLock()
	r, shadow := q.cfg.rateFor(caller), q.cfg.shadowFor(caller)
	q.mu.RUnlock()
	d := quotaDecision{Allowed: true, Caller: caller, Rate: r, Shadow: shadow}
	if r <= 0 {
		return d
	}
	ok, after, err := q.counter.take(ctx, caller, r, quotaBurst(r))
	if err != nil {
		d.Err = fmt.Errorf("quota counter for caller %s: %w", caller, err)
		return d
	}
	d.Allowed, d.RetryAfter = ok, after
	return d
}

// QuotaFlag is the repeatable --quota CALLER=RATE flag.
type QuotaFlag map[string]float64

// String lists CALLER=RATE sorted.
func (f QuotaFlag) String() string {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%g", n, f[n])
	}
	return strings.Join(parts, ",")
}

// Set parses one CALLER=RATE.
func (f QuotaFlag) Set(v string) error {
	name, rs, ok := strings.Cut(v, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("quota %q: want CALLER=REQUESTS_PER_SECOND", v)
	}
	var r float64
	if err := json.Unmarshal([]byte(strings.TrimSpace(rs)), &r); err != nil || r < 0 {
		return fmt.Errorf("quota %s: rate %q: want a number ≥ 0 (0: unlimited)", name, rs)
	}
	f[name] = r
	return nil
}
