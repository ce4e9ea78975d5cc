package kvdispatcher

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform/server"
)

func jsonBody(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return b, nil
}

func newLogger(w io.Writer, target string) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil)).With("target", target)
}

// StoreMain runs one shard ("chaosrun serve kvstore") until ctx ends. Flags:
// the platform's plus --partitions, --rows, --value-bytes (the seeded data)
// and --read-capacity, --byte-capacity, --write-capacity (per second; 0 is
// unlimited).
func StoreMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := server.DefaultFlags()
	parts, rows, valueBytes := 200, 200, 1024
	var c capacity
	var serviceTime time.Duration
	fs := flag.NewFlagSet("chaosrun serve kvstore", flag.ContinueOnError)
	cfg.Register(fs)
	fs.IntVar(&parts, "partitions", parts, "partitions p0..p(N-1) seeded")
	fs.IntVar(&rows, "rows", rows, "rows r00000.. seeded per partition")
	fs.IntVar(&valueBytes, "value-bytes", valueBytes, "bytes of each seeded value")
	fs.Float64Var(&c.ReadsPerSec, "read-capacity", 0, "reads (gets and scans) per second this shard serves; 0 is unlimited")
	fs.Float64Var(&c.BytesPerSec, "byte-capacity", 0, "value bytes read or written per second this shard serves; 0 is unlimited")
	fs.DurationVar(&serviceTime, "service-time", 0, "simulated work per admitted read, holding a worker")
	fs.Float64Var(&c.WritesPerSec, "write-capacity", 0, "writes per second this shard serves; 0 is unlimited")
	if err := server.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if parts < 0 || rows < 0 || valueBytes < 0 || c.ReadsPerSec < 0 || c.BytesPerSec < 0 || c.WritesPerSec < 0 {
		return fmt.Errorf("%s: --partitions, --rows, --value-bytes and the capacities must not be negative", fs.Name())
	}
	log := newLogger(stderr, "kvstore")
	st := newStore()
	st.Seed(parts, rows, valueBytes)
	srv := server.New("kvstore", cfg.Config(), server.NewMetrics(), log)
	(&storeAPI{Store: st, Throttle: newThrottle(c), ServiceTime: serviceTime}).Register(srv)
	log.Info("kvstore configured", "partitions", parts, "rows", rows, "value_bytes", valueBytes,
		"service_time", serviceTime, "read_capacity", c.ReadsPerSec, "byte_capacity", c.BytesPerSec, "write_capacity", c.WritesPerSec)
	return srv.Run(ctx, stdout)
}

// DispatcherMain runs a dispatcher ("chaosrun serve kvdispatcher") until ctx
// ends. It needs --dep kvstore=SHARD0,SHARD1,... (the shards in order).
// Flags: the platform's plus the switches --ru, --tiers, --hotkeys,
// --shard-breakers (on|off) and their tuning; see --help.
func DispatcherMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := server.DefaultFlags()
	dc := defaultDispatcherConfig()
	fs := flag.NewFlagSet("chaosrun serve kvdispatcher", flag.ContinueOnError)
	cfg.Register(fs)
	registerDispatcherFlags(fs, &dc)
	if err := server.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := cfg.Validate("kvstore"); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	log := newLogger(stderr, "kvdispatcher")
	m := server.NewMetrics()
	shards, err := newShardClients(dc, cfg.Deps["kvstore"], cfg.DepTimeout, m.Registry())
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	defer func() {
		for _, c := range shards {
			c.Close()
		}
	}()
	d, err := newDispatcher(dc, shards, cfg.DepTimeout, m, log)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	srv := server.New("kvdispatcher", cfg.Config(), m, log)
	d.Register(srv)
	log.Info("kvdispatcher configured", "shards", len(shards), "ru", dc.RU, "tiers", dc.Tiers,
		"hotkeys", dc.HotKeys, "shard_breakers", dc.ShardBreakers, "quota", dc.Quota, "dep_timeout", cfg.DepTimeout)
	var wg sync.WaitGroup
	rctx, stop := context.WithCancel(ctx)
	wg.Go(func() { d.Run(rctx) })
	err = srv.Run(ctx, stdout)
	stop()
	wg.Wait()
	return err
}

func registerDispatcherFlags(fs *flag.FlagSet, dc *dispatcherConfig) {
	fs.Var((*onOff)(&dc.RU), "ru", "price requests in request units (on) or count them (off: a plain per-caller QPS limit)")
	fs.Var((*onOff)(&dc.Tiers), "tiers", "raise the lower tiers' price as the latency ratio falls: on or off")
	fs.Var((*onOff)(&dc.HotKeys), "hotkeys", "serve hot keys from a local cache with coalesced misses: on or off")
	fs.Var((*onOff)(&dc.ShardBreakers), "shard-breakers", "one circuit breaker per shard: on or off")
	fs.Float64Var(&dc.Quota, "ru-quota", dc.Quota, "each caller's refill per second: RU (--ru on) or requests (--ru off)")
	fs.Float64Var(&dc.Burst, "ru-burst", dc.Burst, "most a caller's bucket holds (RU or requests)")
	fs.DurationVar(&dc.Epoch, "ru-epoch", dc.Epoch, "bucket refill period")
	fs.Float64Var(&dc.Weights.Read, "ru-w-read", dc.Weights.Read, "RU per byte read")
	fs.Float64Var(&dc.Weights.Write, "ru-w-write", dc.Weights.Write, "RU per 4 KiB written")
	fs.Float64Var(&dc.Weights.Latency, "ru-w-latency", dc.Weights.Latency, "RU per millisecond of backend latency")
	fs.IntVar(&dc.MaxCallers, "max-callers", dc.MaxCallers, "callers with a bucket of their own; the rest share \"other\"")
	fs.Float64Var(&dc.Policy.Thresholds[0], "shed-sheddable-below", dc.Policy.Thresholds[0], "latency ratio below which the sheddable tier pays the penalty")
	fs.Float64Var(&dc.Policy.Thresholds[1], "shed-default-below", dc.Policy.Thresholds[1], "latency ratio below which the default tier pays it too")
	fs.Float64Var(&dc.Policy.Penalty, "tier-penalty", dc.Policy.Penalty, "price multiplier of a penalised tier")
	fs.DurationVar(&dc.RatioWindow, "ratio-window", dc.RatioWindow, "short-term latency window")
	fs.DurationVar(&dc.RatioFloor, "ratio-floor", dc.RatioFloor, "added to both p95s so noise on a fast backend is not a collapse")
	fs.IntVar(&dc.HotK, "hot-k", dc.HotK, "keys the top-k counter monitors")
	fs.IntVar(&dc.HotThreshold, "hot-threshold", dc.HotThreshold, "requests per --hot-window that make a key hot")
	fs.DurationVar(&dc.HotWindow, "hot-window", dc.HotWindow, "hot-key counting window")
	fs.DurationVar(&dc.CacheTTL, "cache-ttl", dc.CacheTTL, "how long a hot key's value is served from the local cache")
	fs.IntVar(&dc.CacheSize, "cache-size", dc.CacheSize, "hot-key cache entries")
	sc := &dc.Shard
	fs.Float64Var(&sc.BreakerFailureRate, "breaker-failure-rate", sc.BreakerFailureRate, "share of failed calls (0..1) that opens a shard's breaker")
	fs.IntVar(&sc.BreakerMinCalls, "breaker-min-calls", sc.BreakerMinCalls, "calls a shard needs in the window before its breaker may open")
	fs.DurationVar(&sc.BreakerWindow, "breaker-window", sc.BreakerWindow, "rolling window of a shard breaker's failure rate")
	fs.DurationVar(&sc.BreakerDelay, "breaker-delay", sc.BreakerDelay, "how long an open shard breaker stays open")
	fs.IntVar(&sc.BreakerProbes, "breaker-probes", sc.BreakerProbes, "trial calls in half-open that must succeed to close a shard's breaker")
	fs.IntVar(&sc.Retries, "shard-retries", sc.Retries, "retries of a failed shard call (never of a timeout)")
}

// onOff is a bool flag spelled on|off.
type onOff bool

func (o *onOff) String() string {
	if o != nil && *o {
		return "on"
	}
	return "off"
}

func (o *onOff) Set(s string) error {
	switch s {
	case "on":
		*o = true
	case "off":
		*o = false
	default:
		return fmt.Errorf("%q: allowed: on, off", s)
	}
	return nil
}
