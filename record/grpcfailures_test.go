package record

import "testing"

// TestGRPCFailures: only a grpc_req_duration series whose status is not
// OK counts its samples as failed calls.
func TestGRPCFailures(t *testing.T) {
	for _, tc := range []struct {
		s    Series
		want int64
	}{
		{Series{Metric: "grpc_req_duration", Tags: map[string]string{"status": "14"}, Count: 7}, 7},
		{Series{Metric: "grpc_req_duration", Tags: map[string]string{"status": "0"}, Count: 7}, 0},
		{Series{Metric: "grpc_req_duration", Count: 3}, 3}, // no status: not known to be OK
		{Series{Metric: "http_req_duration", Tags: map[string]string{"status": "503"}, Count: 7}, 0},
	} {
		if got := tc.s.GRPCFailures(); got != tc.want {
			t.Errorf("%s %v: %d failures, want %d", tc.s.Metric, tc.s.Tags, got, tc.want)
		}
	}
}
