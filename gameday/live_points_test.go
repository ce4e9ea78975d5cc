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

// TestPointPerAPI: a second's point carries each API's p99 when there are
// several (one line each on the page), counts gRPC calls in its rate and
// those not OK as errors, and has no per-API figures for a single API.
func TestPointPerAPI(t *testing.T) {
	start := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	series := func(metric string, tags map[string]string, ms, n int64) record.Series {
		h := record.NewHist()
		h.RecordValues(ms*1000, n)
		enc, err := record.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return record.Series{Metric: metric, Kind: record.Trend, Tags: tags, Count: n, Hist: enc}
	}
	for _, tc := range []struct {
		name       string
		series     []record.Series
		rate, errs float64
		apis       map[string]float64
	}{
		{"two HTTP APIs", []record.Series{
			series("http_req_duration", map[string]string{"api": "check"}, 1, 90),
			series("http_req_duration", map[string]string{"api": "cash"}, 100, 10),
			{Metric: "http_req_failed", Kind: record.Rate, Tags: map[string]string{"api": "cash"}, Count: 10, NonZero: 4},
		}, 100, 4, map[string]float64{"check": 1, "cash": 100}},
		{"gRPC methods", []record.Series{
			series("grpc_req_duration", map[string]string{"name": "/a.S/Get", "status": "0"}, 2, 50),
			series("grpc_req_duration", map[string]string{"name": "/a.S/List", "status": "14"}, 3, 5),
			series("grpc_req_duration", map[string]string{"name": "/a.S/List", "status": "0"}, 3, 45),
		}, 100, 5, map[string]float64{"/a.S/Get": 2, "/a.S/List": 3}},
		{"one API", []record.Series{series("http_req_duration", map[string]string{"api": "check"}, 1, 10)}, 10, 0, nil},
	} {
		p, _ := point(record.Window{Start: start, Series: tc.series}, start)
		if p.Rate != tc.rate || p.Errors != tc.errs || len(p.APIs) != len(tc.apis) {
			t.Errorf("%s: rate %v, errors %v, apis %v; want %v, %v, %v", tc.name, p.Rate, p.Errors, p.APIs, tc.rate, tc.errs, tc.apis)
			continue
		}
		for api, want := range tc.apis {
			if !near(p.APIs[api], want) {
				t.Errorf("%s: %s p99 %v, want %v", tc.name, api, p.APIs[api], want)
			}
		}
	}
}
