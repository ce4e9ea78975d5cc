// Command app is a small shop service for the Compose acceptance test:
// GET /item?key=K reads K from Redis and computes what Redis lacks. It
// knows nothing of chaosrun: it reads REDIS_ADDR and its own CACHE_TIMEOUT
// (a bound on each cache call; 0 waits as long as Redis takes) from the
// environment, like any twelve-factor service.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
)

func main() {
	check := flag.Bool("check", false, "exit 0 when the service on :8080 is healthy (the container's health check)")
	flag.Parse()
	if *check {
		os.Exit(healthCheck())
	}
	timeout, err := time.ParseDuration(getenv("CACHE_TIMEOUT", "0s"))
	if err != nil {
		log.Fatalf("CACHE_TIMEOUT: %v", err)
	}
	rt := timeout
	if rt <= 0 {
		rt = -1 // block as long as the cache takes
	}
	cache := redis.NewClient(&redis.Options{Addr: getenv("REDIS_ADDR", "localhost:6379"), ReadTimeout: rt, WriteTimeout: rt,
		DialTimeout: 2 * time.Second, ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 128, PoolTimeout: 30 * time.Second,
		DisableIdentity: true, Protocol: 2})
	lookups := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shop_cache_total", Help: "Cache lookups by result."}, []string{"result"})
	reg := prometheus.NewRegistry()
	reg.MustRegister(lookups)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("GET /internal/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /item", func(w http.ResponseWriter, r *http.Request) {
		key := "item:" + r.URL.Query().Get("key")
		ctx, cancel := bound(r.Context(), timeout)
		val, err := cache.Get(ctx, key).Result()
		cancel()
		switch {
		case err == nil:
			lookups.WithLabelValues("hit").Inc()
		case errors.Is(err, redis.Nil):
			lookups.WithLabelValues("miss").Inc()
			val = compute(key)
			ctx, cancel := bound(context.WithoutCancel(r.Context()), timeout)
			cache.Set(ctx, key, val, time.Minute) //nolint:errcheck // a lost store is a later miss
			cancel()
		default:
			lookups.WithLabelValues("bypass").Inc()
			val = compute(key)
		}
		fmt.Fprintln(w, val)
	})
	srv := &http.Server{Addr: getenv("LISTEN", ":8080"), Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// compute is the work the cache saves.
func compute(key string) string {
	time.Sleep(3 * time.Millisecond)
	return "value of " + key
}

func bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

func healthCheck() int {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://127.0.0.1:8080/healthz")
	if err != nil {
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
