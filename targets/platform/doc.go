// Package platform is the standard service platform the reference targets are
// built on: a server with a server-wide worker limit (the service's thread pool),
// per-dependency bulkheads, and an HTTP client to a dependency's replicas.
//
// It never imports the harness: targets are products of their own, and the harness
// only talks to them over HTTP (/healthz, /metrics and their APIs).
package platform
