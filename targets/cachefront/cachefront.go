// Package cachefront is a small service in front of a Redis cache: GET
// /item?key=K reads K from Redis and, on a miss, computes the value and
// stores it. Its protection is a per-call cache timeout: when Redis is slow
// or gone, a request bypasses the cache after --cache-timeout and computes
// the value itself instead of waiting. It shows a third-party dependency
// (a real redis-server) behind a Toxiproxy edge.
package cachefront

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

// front serves /item from the cache, computing what the cache lacks.
type front struct {
	Cache *redis.Client
	// Timeout bounds each cache call; 0 waits as long as the cache takes.
	Timeout time.Duration
	// Compute is the work of producing a value without the cache.
	Compute time.Duration
	// TTL is how long stored values live.
	TTL time.Duration

	lookups *prometheus.CounterVec
}

// newClient is a Redis client for addr whose calls are bounded by timeout
// (0: unbounded, as a client without the protection).
func newClient(addr string, timeout time.Duration) *redis.Client {
	rt := timeout
	if rt <= 0 {
		rt = -1 // block as long as the cache takes
	}
	return redis.NewClient(&redis.Options{
		Addr:                  addr,
		ReadTimeout:           rt,
		WriteTimeout:          rt,
		DialTimeout:           2 * time.Second,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
		PoolSize:              128,
		PoolTimeout:           30 * time.Second,
		DisableIdentity:       true,
		Protocol:              2,
	})
}

// Register adds GET /item to srv and its counters to srv's registry.
func (f *front) Register(srv *server.Server) {
	f.lookups = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cachefront_lookups_total",
		Help: "Cache lookups by result: hit, miss (computed and stored), bypass (cache failed or too slow; computed).",
	}, []string{"result"})
	srv.Metrics().Registry().MustRegister(f.lookups)
	srv.HandleFunc("GET /item", f.item)
}

func (f *front) item(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		platform.WriteError(w, http.StatusBadRequest, "bad-request", "key is required")
		return
	}
	ctx := r.Context()
	cctx, cancel := f.bound(ctx)
	val, err := f.Cache.Get(cctx, "item:"+key).Result()
	cancel()
	result := "hit"
	switch {
	case err == nil:
	case errors.Is(err, redis.Nil):
		result = "miss"
		val = f.compute(ctx, key)
		sctx, cancel := f.bound(ctx)
		f.Cache.Set(sctx, "item:"+key, val, f.TTL) //nolint:errcheck // a failed store only costs a later miss
		cancel()
	default:
		if ctx.Err() != nil {
			return // the caller left
		}
		result = "bypass"
		val = f.compute(ctx, key)
	}
	f.lookups.WithLabelValues(result).Inc()
	w.Header().Set("X-Cache", result)
	platform.WriteJSON(w, http.StatusOK, map[string]string{"key": key, "value": val, "cache": result})
}

func (f *front) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.Timeout > 0 {
		return context.WithTimeout(ctx, f.Timeout)
	}
	return context.WithCancel(ctx)
}

// compute is the value of key without the cache, after Compute of work.
func (f *front) compute(ctx context.Context, key string) string {
	if f.Compute > 0 {
		t := time.NewTimer(f.Compute)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// Main runs the front ("chaosrun serve cachefront") until ctx ends. It needs
// --dep cache=ADDR (a Redis server). Flags: the platform's plus
// --cache-timeout D (0 = off), --compute D and --ttl D.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := server.DefaultFlags()
	f := &front{Timeout: 50 * time.Millisecond, Compute: 5 * time.Millisecond, TTL: 10 * time.Minute}
	fs := flag.NewFlagSet("chaosrun serve cachefront", flag.ContinueOnError)
	cfg.Register(fs)
	fs.DurationVar(&f.Timeout, "cache-timeout", f.Timeout, "bound of each cache call before bypassing the cache (0: wait as long as it takes)")
	fs.DurationVar(&f.Compute, "compute", f.Compute, "work of computing a value without the cache")
	fs.DurationVar(&f.TTL, "ttl", f.TTL, "lifetime of stored values")
	if err := server.ParseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := cfg.Validate("cache"); err != nil {
		return fmt.Errorf("%s: %w", fs.Name(), err)
	}
	if f.Timeout < 0 || f.Compute < 0 || f.TTL <= 0 {
		return fmt.Errorf("%s: --cache-timeout %s, --compute %s must not be negative and --ttl %s must be positive", fs.Name(), f.Timeout, f.Compute, f.TTL)
	}
	addrs := cfg.Deps["cache"]
	if len(addrs) != 1 {
		return fmt.Errorf("%s: --dep cache takes one address, got %d", fs.Name(), len(addrs))
	}
	f.Cache = newClient(addrs[0], f.Timeout)
	defer f.Cache.Close()
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("target", "cachefront")
	srv := server.New("cachefront", cfg.Config(), server.NewMetrics(), log)
	f.Register(srv)
	return srv.Run(ctx, stdout)
}
