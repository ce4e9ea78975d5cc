package kvdispatcher

import (
	"fmt"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform/client"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

// BenchmarkQoSPath is what the dispatcher adds to each request before and
// after the shard call: caller bucket admission with the tier multiplier,
// the top-k update, the latency-ratio sample and the after-the-answer charge.
// Budget: ≤ 5 µs per request.
func BenchmarkQoSPath(b *testing.B) {
	cfg := defaultDispatcherConfig()
	cfg.Quota, cfg.Burst = 1e12, 1e12
	d, err := newDispatcher(cfg, []*client.Client{nil}, time.Second, server.NewMetrics(), nil)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = fmt.Sprintf("p%d/r%05d", i%200, (i*7919)%5000)
	}
	callers := []string{"reader-0", "reader-1", "scanner", "bot"}
	now := time.Unix(0, 0)
	w := cfg.Weights
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		key := keys[i&4095]
		if i&3 == 0 {
			key = "p7/r00001" // a hot key among the rest
		}
		p, _ := d.Admit(callers[i&3], criticality(i%3), w.ReadBase(), now)
		d.hot.Observe(key, now)
		d.ratio.Observe(1.5)
		d.Charge(p, w.ReadAfter(1024, 1500*time.Microsecond), now)
	}
}
