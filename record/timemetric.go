package record

import "strings"

// IsTimeMetric says a trend's values are durations in ms: k6's built-in
// timings and any metric named *_duration. Assertions (their unit) and
// the metric export (seconds) read this one rule.
func IsTimeMetric(name string) bool {
	if strings.HasSuffix(name, "_duration") {
		return true
	}
	switch name {
	case "http_req_blocked", "http_req_connecting", "http_req_tls_handshaking",
		"http_req_sending", "http_req_waiting", "http_req_receiving":
		return true
	}
	return false
}
