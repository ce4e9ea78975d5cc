package gameday

import (
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// TestPointsSlidingP99 checks the plots' sliding p99: over the last Slide
// seconds of merged histograms, beside the per-second p99; points kept
// from earlier calls agree with computing them anew.
func TestPointsSlidingP99(t *testing.T) {
	start := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	win := func(i int, ms int64) record.Window {
		h := record.NewHist()
		h.RecordValues(ms*1000, 100)
		enc, err := record.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return record.Window{Start: start.Add(time.Duration(i) * time.Second),
			Series: []record.Series{{Metric: "http_req_duration", Kind: record.Trend, Count: 100, Hist: enc}}}
	}
	l := newLive(4 * time.Second)
	l.setStart(start)
	// 1 ms for 8 s, 100 ms for 2 s, 1 ms for 3 s (the last window, +13 s,
	// still fills).
	for i := 0; i < 14; i++ {
		ms := int64(1)
		if i == 8 || i == 9 {
			ms = 100
		}
		l.add(win(i, ms))
		l.points(100) // as the page asks each second: settled points are kept
	}
	for _, tc := range []struct {
		n         int
		wantFirst int64
		p99, p99w []float64
	}{
		// The sliding 4 s hold a 100 ms second until +13 s: its p99 stays
		// 100 ms while the per-second p99 is back at 1 ms.
		{n: 4, wantFirst: 9, p99: []float64{100, 1, 1, 1}, p99w: []float64{100, 100, 100, 100}},
		{n: 100, wantFirst: 0, p99: []float64{1, 1, 1, 1, 1, 1, 1, 1, 100, 100, 1, 1, 1}, p99w: []float64{1, 1, 1, 1, 1, 1, 1, 1, 100, 100, 100, 100, 100}},
	} {
		pts := l.points(tc.n)
		if len(pts) != len(tc.p99) || pts[0].T != tc.wantFirst {
			t.Fatalf("points(%d): %d points from +%ds, want %d from +%ds", tc.n, len(pts), pts[0].T, len(tc.p99), tc.wantFirst)
		}
		for i, p := range pts {
			if !near(p.P99, tc.p99[i]) || !near(p.P99W, tc.p99w[i]) {
				t.Errorf("points(%d)[%d] at +%ds: p99 %v, sliding %v; want %v, %v", tc.n, i, p.T, p.P99, p.P99W, tc.p99[i], tc.p99w[i])
			}
		}
	}
}

func near(got, want float64) bool { return got >= want && got <= want*1.001 }
