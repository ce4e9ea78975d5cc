package gameday

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

func BenchmarkPoints(b *testing.B) {
	start := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	l := newLive(10 * time.Second)
	l.setStart(start)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		var ss []record.Series
		for api := 0; api < 3; api++ {
			h := record.NewHist()
			for j := 0; j < 100; j++ {
				h.RecordValue(int64(1000 + rng.ExpFloat64()*20000 + float64(i%40/20)*2e6*rng.Float64()))
			}
			enc, _ := record.EncodeHist(h)
			ss = append(ss, record.Series{Metric: "http_req_duration", Kind: record.Trend, Count: 100, Hist: enc})
		}
		l.add(record.Window{Start: start.Add(time.Duration(i) * time.Second), Series: ss})
	}
	l.points(180) // the settled points are kept from here on
	b.ResetTimer()
	for range b.N {
		l.points(180)
	}
}
