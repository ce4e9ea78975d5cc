package client

// HeaderNames are the request headers that carry a request's deadline (the
// milliseconds it has left) and its criticality tier.
type HeaderNames struct {
	Deadline, Criticality string
}

// DefaultHeaderNames are the headers the reference services read.
var DefaultHeaderNames = HeaderNames{Deadline: "X-Deadline-Ms", Criticality: "X-Criticality"}

// Metric names of a logical request's outcome, which both engines emit once
// per request a client model made (tagged with the model).
const (
	MetricRequests      = "resilience_requests"           // counter: logical requests
	MetricAttempts      = "resilience_attempts"           // counter: attempts sent
	MetricRetries       = "resilience_retries"            // counter: retries (attempts after the first)
	MetricBackpressure  = "resilience_backpressure"       // counter: back-pressure answers
	MetricGiveups       = "resilience_giveups"            // counter: requests that ended without success
	MetricRejections    = "resilience_breaker_rejections" // counter: requests the open breaker refused
	MetricAmplification = "resilience_amplification"      // trend: attempts per logical request
	MetricGoodput       = "resilience_goodput"            // rate: successes within the deadline
)
