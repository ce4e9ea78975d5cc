package setup

import "fmt"

// Testbeds are the values --testbed allows.
var Testbeds = []string{"local", "docker"}

// Flags are the flags run and gameday share: where services run and how
// many load processes a workload runs as.
type Flags struct {
	Testbed string
	Shards  int
}

// DefaultFlags are the flags' defaults: the local testbed, one shard.
func DefaultFlags() Flags { return Flags{Testbed: "local", Shards: 1} }

// CheckTestbed refuses a --testbed that is not there; errors are usage
// errors.
func (f *Flags) CheckTestbed() error {
	if f.Testbed != "local" && f.Testbed != "docker" {
		return fmt.Errorf("--testbed %q is not available (allowed: local, docker)", f.Testbed)
	}
	return nil
}

// CheckShards refuses a shard count out of range; errors are usage
// errors.
func (f *Flags) CheckShards() error {
	if f.Shards < 1 || f.Shards > 16 {
		return fmt.Errorf("--load-shards %d out of range (allowed: 1 to 16)", f.Shards)
	}
	return nil
}
