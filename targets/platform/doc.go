// Package platform is the standard service platform the reference targets are
// built on: a server with a server-wide worker pool (the service's thread pool)
// behind a CoDel queue with adaptive LIFO or a bounded FIFO, back pressure,
// caller deadlines (X-Deadline-Ms), per-caller quotas (local or in Redis),
// hard, soft and observe-only bulkheads resizable at runtime through /admin/,
// and an HTTP client to a dependency's replicas.
//
// It never imports the harness: targets are products of their own, and the harness
// only talks to them over HTTP (/healthz, /metrics and their APIs).
package platform
