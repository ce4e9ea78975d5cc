package workloads

import (
	"strings"

	"github.com/chaosrun/chaosrun/scenario"
)

// detailMetrics are k6's per-phase timings: they triple a record's size and
// no report reads them, so a record keeps them only when an assertion does.
var detailMetrics = map[string]bool{
	"http_req_blocked":         true,
	"http_req_connecting":      true,
	"http_req_tls_handshaking": true,
	"http_req_sending":         true,
	"http_req_receiving":       true,
	"http_req_waiting":         true,
	"iteration_duration":       true,
	"data_sent":                true,
	"data_received":            true,
}

// KeepMetric says which metrics a run of sc keeps: all but the detail
// metrics that no assertion of sc reads.
func KeepMetric(sc *scenario.Scenario) func(metric string) bool {
	wanted := map[string]bool{}
	for _, a := range sc.Assertions {
		name, _, _ := strings.Cut(a.Metric, "{")
		wanted[strings.TrimSpace(name)] = true
	}
	return func(metric string) bool { return !detailMetrics[metric] || wanted[metric] }
}

// KeepAlso keeps the metrics checks read besides what keep keeps.
func KeepAlso(keep func(string) bool, checks []scenario.Assertion) func(string) bool {
	if len(checks) == 0 {
		return keep
	}
	wanted := map[string]bool{}
	for _, c := range checks {
		name, _, _ := strings.Cut(c.Metric, "{")
		wanted[name] = true
	}
	return func(m string) bool { return wanted[m] || keep == nil || keep(m) }
}
