package names

import "slices"

// flags are each reference target's flags, the keys its config: and
// --set SERVICE.KEY=VALUE may take. servers' tests keep them equal to
// what each target's -h prints.
var flags = map[string][]string{
	"bankservice":  {"admin-token", "backpressure", "backpressure-watermark", "balancer", "balancer-decay", "breaker", "breaker-delay", "breaker-failure-rate", "breaker-min-calls", "breaker-probes", "breaker-window", "bulkheads", "codel-interval", "codel-target", "deadline-propagation", "deadlines", "dep", "dep-timeout", "drawer", "drawer-capacity", "drawer-low", "ledger-bulkhead", "ledger-limit", "list-bulkhead", "list-limit", "listen", "outlier", "outlier-base-ejection", "outlier-consecutive-5xx", "outlier-failure-percent", "outlier-failure-percent-min-hosts", "outlier-failure-percent-volume", "outlier-interval", "outlier-latency-factor", "outlier-latency-floor", "outlier-latency-volume", "outlier-max-ejection", "outlier-max-percent", "outlier-success-rate-min-hosts", "outlier-success-rate-stdev", "outlier-success-rate-volume", "queue", "queue-length", "queue-timeout", "quota", "quota-default", "quota-redis", "quota-shadow", "quotas", "retries", "retry-backoff", "retry-backoff-max", "retry-budget", "retry-budget-min", "retry-budget-window", "retry-mode", "retry-timeouts", "rpc", "vault-bulkhead", "vault-limit", "workers"},
	"cachefront":   {"admin-token", "backpressure", "backpressure-watermark", "cache-timeout", "codel-interval", "codel-target", "compute", "deadlines", "dep", "dep-timeout", "listen", "queue", "queue-length", "queue-timeout", "quota", "quota-default", "quota-redis", "quota-shadow", "quotas", "ttl", "workers"},
	"kvdispatcher": {"admin-token", "backpressure", "backpressure-watermark", "breaker-delay", "breaker-failure-rate", "breaker-min-calls", "breaker-probes", "breaker-window", "cache-size", "cache-ttl", "codel-interval", "codel-target", "deadlines", "dep", "dep-timeout", "hot-k", "hot-threshold", "hot-window", "hotkeys", "listen", "max-callers", "queue", "queue-length", "queue-timeout", "quota", "quota-default", "quota-redis", "quota-shadow", "quotas", "ratio-floor", "ratio-window", "ru", "ru-burst", "ru-epoch", "ru-quota", "ru-w-latency", "ru-w-read", "ru-w-write", "shard-breakers", "shard-retries", "shed-default-below", "shed-sheddable-below", "tier-penalty", "tiers", "workers"},
	"kvstore":      {"admin-token", "backpressure", "backpressure-watermark", "byte-capacity", "codel-interval", "codel-target", "deadlines", "dep", "dep-timeout", "listen", "partitions", "queue", "queue-length", "queue-timeout", "quota", "quota-default", "quota-redis", "quota-shadow", "quotas", "read-capacity", "rows", "service-time", "value-bytes", "workers", "write-capacity"},
	"ledger":       {"accounts", "admin-token", "backpressure", "backpressure-watermark", "codel-interval", "codel-target", "deadlines", "dep", "dep-timeout", "history", "listen", "page-time", "queue", "queue-length", "queue-timeout", "quota", "quota-default", "quota-redis", "quota-shadow", "quotas", "service-time", "workers"},
	"vault":        {"admin-token", "backpressure", "backpressure-watermark", "cash", "codel-interval", "codel-target", "deadlines", "dep", "dep-timeout", "listen", "queue", "queue-length", "queue-timeout", "quota", "quota-default", "quota-redis", "quota-shadow", "quotas", "service-time", "workers"},
}

// Flags lists target's flags, sorted; nil for a name that is no
// reference target.
func Flags(target string) []string { return slices.Clone(flags[target]) }
