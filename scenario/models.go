package scenario

import (
	"fmt"
	"slices"
	"time"

	"github.com/chaosrun/chaosrun/models/client"
	"github.com/chaosrun/chaosrun/models/keys"
)

// Limits of a key stream.
const (
	maxKeys   = 1 << 40
	maxShards = 1 << 16
)

// Config is the key stream for the models, seeded with seed.
func (k *KeyStream) Config(seed uint64) keys.Config {
	c := keys.Config{Kind: k.Kind, N: uint64(max(k.N, 0)), S: k.S, HotKeys: uint64(max(k.Hot, 0)), HotFraction: 0.9, Seed: seed}
	if k.P != nil {
		c.HotFraction = *k.P
	}
	return c
}

// Config is the client model with its defaults filled.
func (c *Client) Config() client.Config {
	cfg := client.Defaults(c.Model)
	if c.Retries != nil {
		cfg.Retries = *c.Retries
	}
	if c.Base > 0 {
		cfg.Base = c.Base.Std()
	}
	if c.Cap > 0 {
		cfg.Cap = c.Cap.Std()
	}
	if c.Budget != nil {
		cfg.BudgetRatio = *c.Budget
	}
	if c.BudgetWindow > 0 {
		cfg.BudgetWindow = c.BudgetWindow.Std()
	}
	cfg.Deadline = c.Deadline.Std()
	if c.RetryOn != nil {
		cfg.RetryOn = c.RetryOn
	}
	if b := c.Backpressure; b != nil {
		if b.Statuses != nil {
			cfg.Backpressure.Statuses = b.Statuses
		}
		if b.Header != "" {
			cfg.Backpressure.Header, cfg.Backpressure.Value = b.Header, b.Value
		}
		if b.RetryAfter != nil {
			cfg.Backpressure.RetryAfter = *b.RetryAfter
		}
	}
	if b := c.Breaker; b != nil {
		if b.Failures > 0 {
			cfg.BreakerFailures = b.Failures
		}
		if b.Cooldown > 0 {
			cfg.BreakerCooldown = b.Cooldown.Std()
		}
	}
	return cfg
}

// HeaderNames are the client's deadline and criticality headers.
func (c *Client) HeaderNames() client.HeaderNames {
	h := client.DefaultHeaderNames
	if c.DeadlineHeader != "" {
		h.Deadline = c.DeadlineHeader
	}
	if c.CriticalityHeader != "" {
		h.Criticality = c.CriticalityHeader
	}
	return h
}

// oneOf reports whether the value at p is one of allowed, reporting it
// missing or unknown (what names it) when it is not.
func (v *validator) oneOf(p, value string, allowed []string, what string) bool {
	switch {
	case slices.Contains(allowed, value):
		return true
	case !v.ok(p):
	case value == "":
		v.missing(p, allowedList(allowed))
	default:
		v.errf(p, allowedList(allowed), "unknown %s %q", what, value)
	}
	return false
}

// keyStreams checks a stream's key streams.
func (v *validator) keyStreams(p string, ks map[string]*KeyStream) {
	for _, name := range sortedKeys(ks) {
		kp := p + "." + name
		k := ks[name]
		if !keyNamePattern.MatchString(name) || name == "seq" || name == "seed" {
			v.keyErrf(kp, "letters, digits and _, not starting with a digit; not seq or seed", "invalid key stream name %q", name)
		}
		if k == nil {
			v.missing(kp+".kind", allowedList(keys.Kinds))
			continue
		}
		if v.oneOf(kp+".kind", k.Kind, keys.Kinds, "key stream kind") {
			v.keyStream(kp, k)
		}
	}
}

func (v *validator) keyStream(kp string, k *KeyStream) {
	before := len(v.errs)
	bad := func(f, allowed, format string, args ...any) {
		if v.ok(kp + "." + f) {
			v.errf(kp+"."+f, allowed, format, args...)
		}
	}
	if k.N < 0 || k.N > maxKeys {
		bad("n", "1 to 2^40", "n %d out of range", k.N)
	}
	if k.Width < 0 || k.Width > 20 {
		bad("width", "0 to 20", "width %d out of range", k.Width)
	}
	if k.Shards < 0 || k.Shards > maxShards {
		bad("shards", fmt.Sprintf("0 to %d", maxShards), "shards %d out of range", k.Shards)
	}
	if len(k.Only) > 0 && k.Shards == 0 {
		bad("only", "", "only keeps keys by shard: set shards: too")
	}
	for i, s := range k.Only {
		if k.Shards > 0 && (s < 0 || s >= k.Shards) {
			bad(fmt.Sprintf("only[%d]", i), fmt.Sprintf("a shard 0 to shards-1 (shards %d)", k.Shards), "shard %d is not one of the key's shards", s)
		}
	}
	if len(k.Only) > 0 && k.N > 1<<22 {
		bad("only", "", "only filters at most 2^22 keys (n %d)", k.N)
	}
	if k.Kind == keys.Bot {
		return
	}
	if k.Kind == keys.Zipf && (k.S < 0 || k.S > 20) {
		bad("s", "more than 0, at most 20", "s %g out of range", k.S)
	}
	if k.Hot < 0 || (k.N > 0 && k.Hot > k.N) {
		bad("hot", "0 to n", "hot %d out of range", k.Hot)
	}
	if k.P != nil && !(*k.P >= 0 && *k.P <= 1) {
		bad("p", "0 to 1", "p %g out of range", *k.P)
	}
	if len(v.errs) > before {
		return
	}
	cfg := k.Config(1)
	cfg.N = uint64(max(k.N, 1))
	if k.N == 0 {
		cfg.N = 1000
	}
	if k.Kind == keys.Zipf && k.S == 0 {
		cfg.S = 1.1
	}
	if k.Kind == keys.Hotset && k.Hot == 0 {
		cfg.HotKeys = max(cfg.N/100, 1)
	}
	if err := cfg.Validate(); err != nil {
		v.errf(kp, "", "%s", err.Error())
	}
}

// client checks a stream's client model.
func (v *validator) client(p string, c *Client) {
	if c == nil || !v.ok(p) {
		return
	}
	if !v.oneOf(p+".model", c.Model, client.Models, "client model") {
		return
	}
	before := len(v.errs)
	for _, f := range []struct {
		name string
		d    Duration
	}{{"base", c.Base}, {"cap", c.Cap}, {"budget_window", c.BudgetWindow}, {"deadline", c.Deadline}} {
		v.nonNegative(p+"."+f.name, f.d)
	}
	for i, s := range c.RetryOn {
		v.status(fmt.Sprintf("%s.retry_on[%d]", p, i), s)
	}
	for _, h := range []struct{ field, name string }{{"deadline_header", c.DeadlineHeader}, {"criticality_header", c.CriticalityHeader}} {
		if h.name != "" && !headerNamePattern.MatchString(h.name) {
			v.errf(p+"."+h.field, "an HTTP header name", "invalid header name %q", h.name)
		}
	}
	if b := c.Backpressure; b != nil {
		for i, s := range b.Statuses {
			v.status(fmt.Sprintf("%s.backpressure.statuses[%d]", p, i), s)
		}
		if b.Header != "" && !headerNamePattern.MatchString(b.Header) {
			v.errf(p+".backpressure.header", "an HTTP header name", "invalid header name %q", b.Header)
		}
	}
	if c.Breaker != nil && c.Breaker.Failures < 0 {
		v.errf(p+".breaker.failures", "at least 1", "failures %d out of range", c.Breaker.Failures)
	}
	if c.Retries != nil && (*c.Retries < 0 || *c.Retries > 100) {
		v.errf(p+".retries", "0 to 100", "retries %d out of range", *c.Retries)
	}
	if c.Budget != nil && !(*c.Budget >= 0 && *c.Budget <= 100) {
		v.errf(p+".budget", "0 to 100 (retries per request)", "budget %g out of range", *c.Budget)
	}
	if c.BudgetWindow != 0 && c.BudgetWindow.Std() < time.Second {
		v.errf(p+".budget_window", "at least 1s", "budget window %s is too short", c.BudgetWindow.Std())
	}
	if len(v.errs) > before {
		return
	}
	if err := c.Config().Validate(); err != nil {
		v.errf(p, "", "%s", err.Error())
	}
}
