//go:build tools

// Package tools pins the comparison tools `go run ./bench` builds: vegeta
// (an open-model HTTP load generator) and benchstat (summaries of Go
// benchmark runs).
package tools

import (
	_ "github.com/tsenart/vegeta/v12"
	_ "golang.org/x/perf/cmd/benchstat"
)
