package client

import (
	"context"
	"testing"
	"time"
)

// BenchmarkDoFrom is the client model's cost per logical request, by
// component: each model on a request that succeeds at once (the common
// case under load), the smart model on one retried once (its budget,
// breaker and backoff draw; the pause itself is skipped), and the
// back-pressure classification of an answer. The network is not in it.
func BenchmarkDoFrom(b *testing.B) {
	ok := func(int, time.Duration) (Outcome, error) { return Outcome{Status: 200}, nil }
	for _, model := range Models {
		b.Run(model+"/ok", func(b *testing.B) {
			cfg := Defaults(model)
			cfg.Deadline = 2 * time.Second
			c, _ := New(cfg, 1)
			b.ReportAllocs()
			for b.Loop() {
				_, _ = c.DoFrom(context.Background(), time.Now(), ok)
			}
		})
	}
	b.Run("smart/retry-once", func(b *testing.B) {
		cfg := Defaults(ModelSmart)
		cfg.Deadline = 2 * time.Second
		cfg.BudgetRatio = 1 // every request may retry: the benchmark measures the retry's path
		c, _ := New(cfg, 1)
		c.sleep = func(context.Context, time.Duration) error { return nil }
		flaky := func(n int, _ time.Duration) (Outcome, error) {
			if n == 0 {
				return Outcome{Status: 502}, nil
			}
			return Outcome{Status: 200}, nil
		}
		b.ReportAllocs()
		for b.Loop() {
			_, _ = c.DoFrom(context.Background(), time.Now(), flaky)
		}
	})
	rule := Defaults(ModelSmart).Backpressure
	headers := map[string]string{"X-Backpressure": "1", "Retry-After": "2"}
	lookup := func(name string) string { return headers[name] }
	b.Run("classify/200", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = rule.Classify(200, lookup)
		}
	})
	b.Run("classify/503-backpressure", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = rule.Classify(503, lookup)
		}
	})
}
