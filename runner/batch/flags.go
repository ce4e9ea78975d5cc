package batch

import "time"

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

// DefaultOutDir is where records go unless told otherwise.
const DefaultOutDir = "chaosrun-results"

// DefaultFlags are run's own flags' defaults.
func DefaultFlags() Flags { return Flags{OutDir: DefaultOutDir} }

// Options are the batch's options from the flags; outDir is --out-dir
// resolved. The rest (scenarios, setup, testbed, output, export) is the
// caller's.
func (f *Flags) Options(outDir string) Options {
	return Options{OutDir: outDir, Timeout: f.Timeout, TotalTimeout: f.TotalTimeout, Overrides: f.Sets,
		Allow: f.Allow, Quiet: f.Quiet}
}
