package native

import (
	"context"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/models/client"
	"github.com/chaosrun/chaosrun/models/keys"
)

// smartStream is the bench's realistic stream: Zipf keys over a million
// (100 hot) in the path, the key's class as a tag, the smart client with a
// deadline header and a tier.
func smartStream(url string) Stream {
	cfg := client.Defaults(client.ModelSmart)
	cfg.Deadline = 2 * time.Second
	return Stream{Name: "hot", Targets: []string{url}, Method: "GET", Path: "/ok?key={key}", Timeout: 5 * time.Second,
		Arrival: arrival.Constant(1000, 0, time.Second),
		Keys:    map[string]Keys{"key": {Config: keys.Config{Kind: keys.Zipf, N: 1 << 20, S: 1.1, HotKeys: 100, Seed: 1}, Prefix: "k"}},
		Tags:    map[string]string{"key_class": "{key.class}"},
		Client:  &Client{Config: cfg, Tier: "critical", Headers: client.DefaultHeaderNames}}
}

// BenchmarkHotPath measures the engine's per-arrival work that is not the
// network: drawing the keys, building the request on the engine's own
// sending path, and folding the events into the windows.
func BenchmarkHotPath(b *testing.B) {
	spec := Spec{Seed: 1, Streams: []Stream{smartStream("http://127.0.0.1:1")}}
	e, err := newEngine(spec, Shard{Count: 1}, &memOut{}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	l := e.lanes[0]
	w := newWorker(e, l, 0, context.Background())
	b.Run("draw-zipf", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			l.prepareDraw(&w.d, uint64(i))
		}
	})
	b.Run("build-request", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			w.variant = l.prepareDraw(&w.d, uint64(i))
			w.build(uint64(i))
		}
	})
	b.Run("fold-events", func(b *testing.B) {
		b.ReportAllocs()
		now := time.Now().UnixNano()
		for i := range b.N {
			t := now + int64(i)*int64(time.Millisecond)/10
			w.rec.add(event{kind: evAttempt, t: t, dur: 1e6 + int64(i%1000)*1e3, status: 200, variant: uint16(i % 3)})
			w.rec.add(event{kind: evRequest, t: t, dur: 1e6, variant: uint16(i % 3), attempts: 1, flags: flOK | flGoodput})
			if i%1024 == 1023 {
				e.col.gather([]*recorder{w.rec})
				e.col.flush(t - int64(time.Second))
			}
		}
	})
}
