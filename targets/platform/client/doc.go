// Package client is the smart client of the reference platform: calls to one
// dependency's replicas through a balancer that skips ejected and backing-off
// hosts, Envoy-style outlier ejection, retries with full-jitter backoff
// within a retry budget, a circuit breaker and deadline propagation, each
// switchable by a flag (Config) for A/B runs, with platform_client_* metrics.
package client
