package runner

import (
	"math"
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

func histOf(t *testing.T, ms ...float64) string {
	t.Helper()
	h := record.NewHist()
	for _, v := range ms {
		if err := h.RecordValue(int64(v * 1000)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := record.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStatsOf: the status line counts HTTP requests and gRPC calls alike:
// a call whose code is not OK is an error, and both feed the p99.
func TestStatsOf(t *testing.T) {
	for _, tc := range []struct {
		name                string
		series              []record.Series
		reqs, failed, total int64
		p99                 float64
	}{
		{"http", []record.Series{
			{Metric: "http_reqs", Sum: 10},
			{Metric: "http_req_failed", Count: 10, NonZero: 2},
			{Metric: "http_req_duration", Count: 10, Hist: histOf(t, 5, 5, 5, 5, 5, 5, 5, 5, 5, 40)},
		}, 10, 2, 10, 40},
		{"grpc", []record.Series{
			{Metric: "grpc_req_duration", Tags: map[string]string{"status": "0"}, Count: 3, Hist: histOf(t, 1, 2, 3)},
			{Metric: "grpc_req_duration", Tags: map[string]string{"status": "14"}, Count: 1, Hist: histOf(t, 90)},
		}, 4, 1, 4, 90},
		{"both", []record.Series{
			{Metric: "http_reqs", Sum: 2},
			{Metric: "http_req_failed", Count: 2},
			{Metric: "grpc_req_duration", Tags: map[string]string{"status": "4"}, Count: 2},
		}, 4, 2, 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := statsOf(record.Window{Series: tc.series})
			if st.reqs != tc.reqs || st.failed != tc.failed || st.total != tc.total || math.Abs(st.p99-tc.p99) > tc.p99/50 {
				t.Errorf("statsOf = %+v, want reqs %d failed %d total %d p99 %.1f", st, tc.reqs, tc.failed, tc.total, tc.p99)
			}
		})
	}
}
