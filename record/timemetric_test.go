package record

import "testing"

func TestIsTimeMetric(t *testing.T) {
	for name, want := range map[string]bool{
		"http_req_duration": true, "grpc_req_duration": true, "iteration_duration": true, "http_req_waiting": true,
		"http_req_blocked": true, "http_reqs": false, "http_req_failed": false, "data_sent": false, "vus": false,
		"resilience_fault_events": false,
	} {
		if got := IsTimeMetric(name); got != want {
			t.Errorf("IsTimeMetric(%q) = %v, want %v", name, got, want)
		}
	}
}
