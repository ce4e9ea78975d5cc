package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/chaosrun/chaosrun/report"
)

// cmdDiff compares run records: exit 0 when nothing regressed beyond the
// noise, 1 on a significant regression, 2 on bad flags, 3 when a record
// cannot be read.
func cmdDiff(_ context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	var o report.DiffOptions
	fs.IntVar(&o.Iterations, "iterations", 2000, "bootstrap replicates per figure")
	fs.Float64Var(&o.Confidence, "confidence", 0.99, "one-sided confidence a change must reach (0.5 to 0.9999)")
	fs.Float64Var(&o.MinChange, "min-change", 0.15, "smallest relative change that counts (0.15 = 15%)")
	fs.Float64Var(&o.MinChangeTail, "min-change-tail", 1.5, "smallest relative change of a tail figure (p90 and above, max) that counts")
	fs.Float64Var(&o.MinLatency, "min-latency", 0.2, "smallest latency change that counts, in ms")
	fs.Float64Var(&o.MinRate, "min-rate", 0.02, "smallest change of a failure rate that counts (fraction)")
	fs.Float64Var(&o.MinThroughput, "min-throughput", 1, "smallest change of a per-second rate that counts")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the bootstrap")
	fs.IntVar(&o.Block, "block", 2, "seconds per block: the bootstrap resamples blocks of consecutive one-second windows")
	fs.BoolVar(&o.GateAllPhases, "gate-all-phases", false, "key figures before and after faults fail the diff too (default: reported only)")
	assertionsOnly := fs.Bool("assertions-only", false, "compare only the assertions' checks, not the per-API key figures")
	jsonOut := fs.String("json", "", "also write the comparison as JSON to this file")
	mdOut := fs.String("markdown", "", "also write the comparison as Markdown to this file")
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: chaosrun diff [flags] BASE HEAD")
		fmt.Fprintln(st.Stderr, "BASE and HEAD are run records (run.json) or folders of them; several records of one")
		fmt.Fprintln(st.Stderr, "scenario on a side are repeated runs. Exit 1 when a figure got significantly worse.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return exitUsage
	}
	switch {
	case o.Iterations < 100 || o.Iterations > 100000:
		fmt.Fprintf(st.Stderr, "chaosrun diff: --iterations %d: allowed 100 to 100000\n", o.Iterations)
		return exitUsage
	case o.Confidence < 0.5 || o.Confidence > 0.9999:
		fmt.Fprintf(st.Stderr, "chaosrun diff: --confidence %g: allowed 0.5 to 0.9999\n", o.Confidence)
		return exitUsage
	case o.Block < 1 || o.Block > 60:
		fmt.Fprintf(st.Stderr, "chaosrun diff: --block %d: allowed 1 to 60 seconds\n", o.Block)
		return exitUsage
	case o.MinChange < 0 || o.MinChangeTail < 0 || o.MinLatency < 0 || o.MinRate < 0 || o.MinThroughput < 0:
		fmt.Fprintln(st.Stderr, "chaosrun diff: --min-* flags must not be negative")
		return exitUsage
	}
	o.NoKeyFigures = *assertionsOnly
	base, err := report.ReadRuns(fs.Args()[:1])
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun diff: base: %v\n", err)
		return exitRunError
	}
	head, err := report.ReadRuns(fs.Args()[1:])
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun diff: head: %v\n", err)
		return exitRunError
	}
	d, err := report.Compare(base, head, o)
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun diff: %v\n", err)
		return exitRunError
	}
	d.Table(st.Stdout)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(d, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(st.Stderr, "chaosrun diff: %v\n", err)
			return exitRunError
		}
	}
	if *mdOut != "" {
		if err := os.WriteFile(*mdOut, []byte(d.Markdown()), 0o644); err != nil {
			fmt.Fprintf(st.Stderr, "chaosrun diff: %v\n", err)
			return exitRunError
		}
	}
	if d.Regressed() {
		return exitBreach
	}
	return exitOK
}
