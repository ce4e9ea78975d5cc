package loadtest

import (
	"bytes"
	"sync"
)

// ScenarioYAML is a scenario for the fakes, with its name and a bound
// (%s, %v): one service, a second of load, and an assertion that holds
// when the load sends more than bound requests in all.
const ScenarioYAML = `version: 1
name: %s
services:
  ledger: {run: ledger}
workload:
  script: bank.js
  duration: 1s
  targets: [ledger]
assertions:
  - name: some-load
    metric: http_reqs
    checks: ["count > %v"]
`

// Buffer is an output a run writes while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
