package kvdispatcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform/client"
	"github.com/chaosrun/chaosrun/targets/platform/server"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
)

// dispatcherConfig is everything a dispatcher is told besides the platform's flags.
type dispatcherConfig struct {
	// The protections, each switchable for A/B.
	RU, Tiers, HotKeys, ShardBreakers bool

	// Weights price requests in RU (--ru on).
	Weights server.RUWeights
	// Quota is each caller's refill per second: RU with --ru on, requests
	// with --ru off. Burst is the most a bucket holds.
	Quota, Burst float64
	// Epoch is how often buckets are refilled.
	Epoch time.Duration
	// MaxCallers bounds the callers with a bucket of their own; the rest share "other".
	MaxCallers int

	// Policy raises the lower tiers' price as the latency ratio falls.
	Policy tierPolicy
	// RatioWindow is the short-term window; RatioFloor is added to both p95s.
	RatioWindow, RatioFloor time.Duration

	// HotK counters, HotThreshold requests per HotWindow make a key hot.
	HotK         int
	HotThreshold int
	HotWindow    time.Duration
	// CacheTTL and CacheSize shape the hot-key cache.
	CacheTTL  time.Duration
	CacheSize int

	// Shard is the smart client's configuration of each shard's client: one
	// client, so one circuit breaker, per shard (ShardBreakers sets
	// Shard.Breaker).
	Shard client.Config
}

// defaultDispatcherConfig has every protection on.
func defaultDispatcherConfig() dispatcherConfig {
	return dispatcherConfig{
		RU: true, Tiers: true, HotKeys: true, ShardBreakers: true,
		Weights: server.DefaultRUWeights(), Quota: 1000, Burst: 1000, Epoch: 100 * time.Millisecond,
		MaxCallers:  64,
		Policy:      tierPolicy{Thresholds: [2]float64{0.6, 0.3}, Penalty: 50},
		RatioWindow: time.Second, RatioFloor: 2 * time.Millisecond,
		HotK: 64, HotThreshold: 50, HotWindow: time.Second,
		CacheTTL: 3 * time.Second, CacheSize: 1024,
		Shard: defaultShardClientConfig(),
	}
}

// defaultShardClientConfig is the platform's smart client tuned for one
// shard: a breaker that opens at half of ≥ 10 attempts failing within 1 s
// and probes again after 1 s; one retry, never of a timeout (a shard has one
// replica: a retry of a slow call only doubles the wait); no outlier
// detection (nothing to eject to).
func defaultShardClientConfig() client.Config {
	c := client.DefaultConfig()
	c.Breaker, c.BreakerFailureRate, c.BreakerMinCalls = true, 0.5, 10
	c.BreakerWindow, c.BreakerDelay, c.BreakerProbes = time.Second, time.Second, 3
	c.Retries, c.RetryTimeouts = 1, false
	c.Outlier.Enabled = false
	return c
}

// Validate says which value is out of range.
func (c dispatcherConfig) Validate() error {
	switch {
	case !(c.Quota > 0):
		return fmt.Errorf("--ru-quota %v: must be positive", c.Quota)
	case c.Burst < c.Quota*c.Epoch.Seconds():
		return fmt.Errorf("--ru-burst %v: must be at least one epoch's quota (%v)", c.Burst, c.Quota*c.Epoch.Seconds())
	case c.Epoch <= 0 || c.RatioWindow <= 0 || c.HotWindow <= 0 || c.CacheTTL <= 0:
		return errors.New("--ru-epoch, --ratio-window, --hot-window and --cache-ttl must be positive")
	case c.MaxCallers < 1 || c.HotK < 1 || c.HotThreshold < 1 || c.CacheSize < 1:
		return errors.New("--max-callers, --hot-k, --hot-threshold and --cache-size must be at least 1")
	case c.RatioFloor < 0:
		return fmt.Errorf("--ratio-floor %s: must not be negative", c.RatioFloor)
	}
	if err := c.Weights.Validate(); err != nil {
		return err
	}
	if err := c.Shard.Validate(); err != nil {
		return err
	}
	return c.Policy.Validate()
}

// dispatcher routes key-value requests to shards behind its QoS stack.
type dispatcher struct {
	cfg     dispatcherConfig
	shards  []*client.Client
	buckets *server.RUBuckets
	ratio   *latencyRatio
	level   atomic.Int32
	hot     *hotKeys
	cache   *expirable.LRU[string, string]
	sf      singleflight.Group
	m       *dispMetrics
	log     *slog.Logger
	now     func() time.Time
	timeout time.Duration

	callersMu sync.RWMutex
	callers   map[string]struct{}
	hotMu     sync.Mutex
	hotLabels map[string]struct{}
}

// maxHotLabels bounds the key label of kvdispatcher_hot_key_backend_reads_total.
const maxHotLabels = 100

// newDispatcher routes to shards (in --dep order; see NewShardClients) with
// calls bounded by timeout; series go on m's registry.
func newDispatcher(cfg dispatcherConfig, shards []*client.Client, timeout time.Duration, m *server.Metrics, log *slog.Logger) (*dispatcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(shards) == 0 {
		return nil, errors.New("kvdispatcher: no shard given")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b, err := server.NewRUBuckets(server.RU(cfg.Quota*cfg.Epoch.Seconds()), server.RU(cfg.Burst), cfg.Epoch)
	if err != nil {
		return nil, fmt.Errorf("kvdispatcher: %w", err)
	}
	d := &dispatcher{
		cfg: cfg, shards: shards, buckets: b, timeout: timeout,
		ratio: newLatencyRatio(0.95, cfg.Policy.Thresholds[0], cfg.RatioFloor.Seconds()*1000, 20, 30),
		hot:   newHotKeys(cfg.HotK, uint64(cfg.HotThreshold), cfg.HotWindow),
		cache: expirable.NewLRU[string, string](cfg.CacheSize, nil, cfg.CacheTTL),
		m:     newDispMetrics(m.Registry()),
		log:   log, now: time.Now,
		callers: map[string]struct{}{}, hotLabels: map[string]struct{}{},
	}
	d.m.ratio.Set(1)
	return d, nil
}

// Run ends a latency-ratio window every RatioWindow until ctx ends.
func (d *dispatcher) Run(ctx context.Context) {
	t := time.NewTicker(d.cfg.RatioWindow)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.Tick()
		}
	}
}

// Tick ends one latency-ratio window and updates the tier level.
func (d *dispatcher) Tick() {
	ratio, long, short := d.ratio.Tick()
	prev := int(d.level.Load())
	next := d.cfg.Policy.Next(prev, ratio)
	if !d.cfg.Tiers {
		next = 0
	}
	d.level.Store(int32(next))
	d.m.ratio.Set(ratio)
	d.m.p95.WithLabelValues("long").Set(long / 1000)
	d.m.p95.WithLabelValues("short").Set(short / 1000)
	d.m.tierLevel.Set(float64(next))
	if next != prev {
		d.log.Info("tier level", "from", prev, "to", next, "ratio", ratio, "long_p95_ms", long, "short_p95_ms", short)
	}
	if d.cfg.HotKeys {
		d.m.hotKeys.Set(float64(len(d.hot.Hot())))
	}
}

// caller returns name, or "other" once MaxCallers callers have buckets.
// Names that are not valid UTF-8 are mended (they become metric labels).
func (d *dispatcher) caller(name string) string {
	if name == "" {
		name = "anonymous"
	}
	name = strings.ToValidUTF8(name, "\uFFFD")
	d.callersMu.RLock()
	_, ok := d.callers[name]
	d.callersMu.RUnlock()
	if ok {
		return name
	}
	d.callersMu.Lock()
	defer d.callersMu.Unlock()
	if len(d.callers) >= d.cfg.MaxCallers {
		return "other"
	}
	d.callers[name] = struct{}{}
	return name
}

// price is what a request pays before and after it ran, and its tier multiplier.
type price struct {
	Caller string
	Tier   criticality
	Mult   float64
}

// Admit is the QoS decision before a request runs: the tier multiplier at
// the current level and the caller's bucket, debited by base (in RU mode) or
// one request (in QPS mode), times the multiplier. It returns false when the
// bucket is empty.
func (d *dispatcher) Admit(caller string, tier criticality, base server.MilliRU, now time.Time) (price, bool) {
	p := price{Caller: caller, Tier: tier, Mult: 1}
	if d.cfg.Tiers {
		p.Mult = d.cfg.Policy.Multiplier(int(d.level.Load()), tier)
	}
	if !d.cfg.RU {
		base = server.RU(1)
	}
	cost := server.MilliRU(float64(base) * p.Mult)
	ok, _ := d.buckets.Admit(caller, now, cost)
	if ok {
		d.m.ruCharged.WithLabelValues(caller, tier.String()).Add(cost.Float())
	}
	return p, ok
}

// Charge debits what a request cost once it answered (RU mode only).
func (d *dispatcher) Charge(p price, after server.MilliRU, now time.Time) {
	if !d.cfg.RU || after <= 0 {
		return
	}
	cost := server.MilliRU(float64(after) * p.Mult)
	d.buckets.Charge(p.Caller, now, cost)
	d.m.ruCharged.WithLabelValues(p.Caller, p.Tier.String()).Add(cost.Float())
}

// call makes one request to shard. The latency of point reads (observe)
// feeds the latency ratio: scans and writes vary with their size and would
// read as a collapse.
func (d *dispatcher) call(ctx context.Context, shard int, observe bool, method, path string, body []byte, out any) error {
	start := time.Now()
	err := d.shards[shard].Do(ctx, method, path, body, out)
	el := time.Since(start)
	if err != nil {
		kind := client.KindOf(err)
		label := kind.String()
		var de *client.DepError
		if errors.As(err, &de) && kind == client.KindStatus {
			label = strconv.Itoa(de.Status)
		}
		d.m.shardErrors.WithLabelValues(strconv.Itoa(shard), label).Inc()
		if kind == client.KindCanceled || kind == client.KindBreaker || kind == client.KindDeadline {
			observe = false
		}
	}
	if observe {
		d.ratio.Observe(float64(el) / float64(time.Millisecond))
	}
	return err
}

// newShardClients returns one smart client per shard address, named
// kvstore.I, so each shard has its own circuit breaker (when
// cfg.ShardBreakers) and its own platform_client_* series on reg.
func newShardClients(cfg dispatcherConfig, addrs []string, timeout time.Duration, reg prometheus.Registerer) ([]*client.Client, error) {
	cc := cfg.Shard
	cc.Breaker = cfg.ShardBreakers
	var out []*client.Client
	for i, addr := range addrs {
		c, err := client.New(fmt.Sprintf("kvstore.%d", i), []string{addr}, timeout,
			client.WithConfig(cc), client.WithRegisterer(reg))
		if err != nil {
			for _, o := range out {
				o.Close()
			}
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
