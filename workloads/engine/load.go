// Package engine runs load: the Load a run drives, the sharded receiver
// of load processes' results streams, and the engines (k6, native)
// behind a registry that setup, the export and the scenario loader ask.
package engine

import (
	"context"
	"crypto/tls"
	"net/url"
	"time"

	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// Load is the workload as a session drives it: k6 processes, native engine
// processes, or a fake in tests.
type Load interface {
	// Start launches every part of the load; load is under way once
	// Started is closed.
	Start(ctx context.Context) error
	// Started is closed when load runs (every part said hello).
	Started() <-chan struct{}
	// StartTime is when load began; zero before Started is closed.
	StartTime() time.Time
	// OnWindow makes f see each window as it arrives (progress, live SLOs).
	// Call it before Start.
	OnWindow(f func(record.Window))
	// Ended yields each part's end, nil or why it failed, and is closed
	// once every part ended.
	Ended() <-chan error
	// Stop asks every part to stop; Wait waits up to d for all of them to
	// end (taking what Ended still holds).
	Stop()
	Wait(d time.Duration) error
	// Collect hands over the run's windows once load ended, with notes for
	// the record's problems; the caller closes the source.
	Collect(d time.Duration) (record.WindowSource, []string, error)
	// Close frees what Collect did not hand over. It is safe to call twice.
	Close()
}

// ScriptChecks is a load whose script brings checks of its own (a k6
// script's thresholds), judged over the run like the scenario's.
type ScriptChecks interface {
	// ScriptChecks are the checks, known once the load is made.
	ScriptChecks() []scenario.Assertion
}

// PartsReporter is a load that says how each of its processes ended.
type PartsReporter interface {
	// Parts are the ends of the processes that ended.
	Parts() []record.LoadPart
}

// PartCounter is a load that says how many processes send its windows.
type PartCounter interface {
	PartCount() int
}

// LoadSpec is what a load needs once the testbed is up.
type LoadSpec struct {
	Scenario *scenario.Scenario
	// Addresses are the testbed's running services: HOST:PORT of each
	// instance by service name.
	Addresses map[string][]string
	// Seed is the run's seed; Duration how long load runs.
	Seed     int64
	Duration time.Duration
	// Allowed is the blast radius: loopback, the testbed and what the user
	// allowed.
	Allowed *guard.Allowed
	// OutDir receives logs (OutDir/logs) and the window logs.
	OutDir string
	// Keep says which metrics the record keeps.
	Keep func(metric string) bool
}

// NewLoad makes the load of one run.
type NewLoad func(LoadSpec) (Load, error)

// Results says where the results stream's receivers listen and whom they
// let in (--results-listen and friends).
type Results struct {
	// Listen is HOST:PORT; "" is 127.0.0.1 with a free port. With several
	// shards, port 0 gives each a free port on HOST and port P gives
	// shard i port P+i.
	Listen string
	// Token must be in the hello of each shard's stream; when empty, one
	// is made for the run (on loopback too) and given to the shards.
	Token string
	// TLS, when set, makes the receivers speak TLS.
	TLS *tls.Config
	// K6Options are the output options the local load processes need to
	// reach a TLS receiver (ca, server_name).
	K6Options url.Values
	// OnListen, when set, is told each shard's name and listen address.
	OnListen func(shard, addr string)
	// OnRefused, when set, is called with each refused connection's reason.
	OnRefused func(error)
	// HelloTimeout is how long a connection to a receiver has to send its
	// hello; 0 is stream.DefaultHelloTimeout (tests shorten it).
	HelloTimeout time.Duration
}
