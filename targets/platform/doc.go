// Package platform is what every service of the reference platform agrees on
// over HTTP: the headers (caller, criticality, deadline, back pressure), the
// reasons a request is rejected, the JSON error body and how a caller's
// deadline travels in a request's context.
//
// The server side (admission, queues, bulkheads, quotas, request units) is
// package server, the smart client (balancing, outlier ejection, retries,
// breaker) package client, and the streaming estimators (P² quantiles,
// Space-Saving top-k) package stats.
//
// It never imports the harness: targets are products of their own, and the
// harness only talks to them over HTTP (/healthz, /metrics and their APIs).
package platform
