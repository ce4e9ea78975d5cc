// Package server is the server side of the reference platform: a listener
// with a ready line, /healthz and /metrics, and an admission path in front of
// every route — the caller's deadline, per-caller rate quotas (local or in
// Redis), per-API bulkheads (resizable through /admin/), each quota and
// bulkhead enforcing or in shadow mode (counting what it would reject),
// and a server-wide worker pool behind a CoDel queue with adaptive LIFO or a
// bounded FIFO, with back pressure. It also prices requests in request units
// (RUWeights, RUBuckets) and parses the flags every target shares (Flags).
package server
