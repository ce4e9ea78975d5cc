package main

import (
	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/runner/setup"
)

// setupFlags adds --testbed and --load-shards, which run and gameday share.
func setupFlags(fl *pflag.FlagSet, f *setup.Flags) {
	fl.StringVar(&f.Testbed, "testbed", f.Testbed, "where services run: local (child processes) or docker (containers)")
	fl.IntVar(&f.Shards, "load-shards", f.Shards, "run the workload as N load processes (each every Nth arrival; k6: execution segments) and merge their results")
}

// resultsFlags adds where run's and gameday's results stream is received.
func resultsFlags(fl *pflag.FlagSet, f *runner.ResultsFlags, getenv func(string) string) {
	fl.StringVar(&f.Listen, "results-listen", "", "receive the results stream on HOST:PORT, e.g. 0.0.0.0:7000 for load processes elsewhere (default 127.0.0.1, a free port; shard k of N gets PORT+k-1)")
	fl.StringVar(&f.Token, "results-token", getenv("CHAOSRUN_RESULTS_TOKEN"), "the token a results stream must show in its hello (default: one made for each run, on loopback too; printed when the listen address is not loopback, for load processes elsewhere; env CHAOSRUN_RESULTS_TOKEN)")
	fl.StringVar(&f.Cert, "results-tls-cert", "", "PEM certificate: the results stream speaks TLS (with --results-tls-key)")
	fl.StringVar(&f.Key, "results-tls-key", "", "PEM private key of --results-tls-cert")
}

// allowFlag adds --allow-target, the blast radius's widening.
func allowFlag(fl *pflag.FlagSet, allow *[]string) {
	fl.StringArrayVar(allow, "allow-target", nil, "let load reach this host or host:port besides loopback and the testbed's services (repeatable)")
}

// k6Flag adds --k6, the k6 binary for workloads with engine: k6.
func k6Flag(fl *pflag.FlagSet, k6 *string) {
	fl.StringVar(k6, "k6", "", "for workloads with engine: k6, use this k6 binary (built with xk6-resilience) instead of building one")
}
