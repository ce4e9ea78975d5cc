// Package workloads is what a run hands its load, whichever engine drives
// it: the script's environment (ScriptEnv), where the script is
// (ResolveScript), and which metrics the run keeps (KeepMetric). The
// folder also holds the bundled k6 scripts. It knows scenarios, not
// testbeds: a topology reaches it as service → addresses.
package workloads
