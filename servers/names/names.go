// Package names lists the programs `chaosrun serve NAME` runs, without
// linking them: the scenario loader checks a service's `run:` against
// these names and needs none of the servers' code.
package names

// Toxiproxy is the embedded Toxiproxy's name; every other server is a
// reference target.
const Toxiproxy = "toxiproxy"

// Relay is the testbed's TCP relay; no reference target either.
const Relay = "relay"

// targets are the reference targets, sorted.
var targets = []string{"bankservice", "cachefront", "kvdispatcher", "kvstore", "ledger", "vault"}

// Targets lists the reference targets, sorted: the names a scenario's
// `run:` may take.
func Targets() []string { return append([]string(nil), targets...) }
