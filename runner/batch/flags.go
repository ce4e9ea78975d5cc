package batch

import (
	"time"

	"github.com/spf13/pflag"
)

// Flags are chaosrun run's own flags: overrides, blast radius, the k6
// binary, where the records go, time limits, the seed and the progress
// line.
type Flags struct {
	Sets, Allow           []string
	K6, OutDir            string
	Timeout, TotalTimeout time.Duration
	Seed                  int64
	Quiet                 bool
}

// Register adds run's flags to fl.
func (f *Flags) Register(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.Sets, "set", nil, "override a scenario value, e.g. bank.bulkheads=off (repeatable)")
	fl.StringVar(&f.K6, "k6", "", "for workloads with engine: k6, use this k6 binary (built with xk6-resilience) instead of building one")
	fl.StringVar(&f.OutDir, "out-dir", "chaosrun-results", "folder for run records, summaries and logs (one sub-folder per scenario)")
	fl.DurationVar(&f.Timeout, "timeout", 0, "hard wall-clock limit per scenario (default: load duration + 3m, or the scenario's timeout)")
	fl.DurationVar(&f.TotalTimeout, "total-timeout", 0, "wall-clock limit for all scenarios together; those not finished by then are not run (default: none)")
	fl.Int64Var(&f.Seed, "seed", 0, "seed for every random choice (default: the scenario's, else random)")
	fl.BoolVar(&f.Quiet, "quiet", false, "no live progress line")
	fl.StringArrayVar(&f.Allow, "allow-target", nil, "let load reach this host or host:port besides loopback and the testbed's services (repeatable)")
}

// Options are the batch's options from the flags; outDir is --out-dir
// resolved. The rest (scenarios, setup, testbed, output, export) is the
// caller's.
func (f *Flags) Options(outDir string) Options {
	return Options{OutDir: outDir, Timeout: f.Timeout, TotalTimeout: f.TotalTimeout, Overrides: f.Sets,
		Allow: f.Allow, Quiet: f.Quiet}
}
