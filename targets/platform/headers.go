package platform

// Headers shared by every service of the platform, client and server side.
const (
	// HeaderDeadline carries the caller's remaining budget in whole milliseconds
	// at send time (relative, so clock skew does not matter). The server turns
	// it into a deadline at arrival.
	HeaderDeadline = "X-Deadline-Ms"
	// HeaderBackpressure is "1" on a 503 that asks the caller to back off (do
	// not retry at once); Retry-After says for how long.
	HeaderBackpressure = "X-Backpressure"
	// HeaderRetryAfter is the standard Retry-After header, in whole seconds.
	HeaderRetryAfter = "Retry-After"
	// HeaderCaller names the calling client, for per-caller quotas.
	HeaderCaller = "X-Caller"
	// HeaderCriticality is the request's tier: critical, default or sheddable.
	HeaderCriticality = "X-Criticality"
)

// Request tiers carried in HeaderCriticality. Sheddable work is what a
// droppable-above-threshold bulkhead refuses first.
const (
	CriticalityCritical  = "critical"
	CriticalityDefault   = "default"
	CriticalitySheddable = "sheddable"
)

// Reject reasons (RejectHeader values) beyond those in respond.go.
const (
	// ReasonCodel: the request waited more than 2×target in an overloaded CoDel queue (503).
	ReasonCodel = "codel"
	// ReasonBackpressure: the queue is overloaded; back off (503 with HeaderBackpressure).
	ReasonBackpressure = "backpressure"
	// ReasonQuota: the caller is over its rate quota (429).
	ReasonQuota = "quota"
	// ReasonDeadline: the caller's deadline passed before the work started (504).
	ReasonDeadline = "deadline"
	// ReasonBreaker: a circuit breaker to a dependency is open (503).
	ReasonBreaker = "breaker"
	// ReasonQueueFull: the bounded FIFO queue is full (503).
	ReasonQueueFull = "queue-full"
)

// isRejectReason says whether reason is one the platform puts in RejectHeader.
func isRejectReason(reason string) bool {
	switch reason {
	case ReasonBulkhead, ReasonQueueTimeout, ReasonDependencyTimeout, ReasonDependencyError,
		ReasonCodel, ReasonBackpressure, ReasonQuota, ReasonDeadline, ReasonBreaker, ReasonQueueFull:
		return true
	}
	return false
}

// AdminTokenEnv is the environment variable that gives a target's admin token
// when its --admin-token flag is not set.
const AdminTokenEnv = "CHAOSRUN_TOKEN"
