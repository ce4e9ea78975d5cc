package native

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// runToStream runs spec and decodes what it wrote.
func runToStream(t *testing.T, spec Spec, shard Shard) stream.Summary {
	t.Helper()
	var buf bytes.Buffer
	w, err := stream.NewWriter(&buf, Hello())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), spec, shard, w); err != nil {
		t.Fatal(err)
	}
	sum, err := stream.Decode(&buf)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if !sum.Ended {
		t.Fatal("no end line")
	}
	return sum
}

// total sums a metric's counts (Sum for counters) over matching series.
func total(sum stream.Summary, metric string, match map[string]string) (count int64, value float64) {
	for _, w := range sum.Windows {
	series:
		for _, s := range w.Series {
			if s.Metric != metric {
				continue
			}
			for k, v := range match {
				if s.Tags[k] != v {
					continue series
				}
			}
			count += s.Count
			switch s.Kind {
			case record.Counter:
				value += s.Sum
			case record.Rate:
				value += float64(s.NonZero)
			}
		}
	}
	return count, value
}

func okServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestConstantRate(t *testing.T) {
	srv := okServer(t)
	spec := Spec{Seed: 1, Streams: []Stream{{
		Name: "get", Targets: []string{srv.URL}, Method: "GET", Path: "/x", Timeout: time.Second,
		Arrival: arrival.Constant(200, 0, 2*time.Second), Tags: map[string]string{"api": "Get"},
	}}}
	sum := runToStream(t, spec, Shard{})
	n, v := total(sum, "http_reqs", map[string]string{"api": "Get", "status": "200", "scenario": "get", "method": "GET", "expected_response": "true", "name": "/x"})
	if n != 400 || v != 400 {
		t.Errorf("http_reqs: %d samples, sum %v; want 400", n, v)
	}
	if n, _ := total(sum, "dropped_iterations", nil); n != 0 {
		t.Errorf("dropped %d", n)
	}
	if n, _ := total(sum, "http_req_duration", map[string]string{"api": "Get"}); n != 400 {
		t.Errorf("http_req_duration %d samples", n)
	}
}
