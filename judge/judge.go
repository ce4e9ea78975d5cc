// Package judge gives a scenario's verdicts and run record without a
// testbed: over results files (what `k6 run --out resilience=FILE`,
// `chaosrun load --results FILE` or a run's logs/results*.jsonl hold), or
// over the results streams of N load shards received from anywhere, with
// the fault events `chaosrun fault apply --report-to` sends. The windows
// of several shards merge exactly (record.MergeWindows); the verdicts are
// assertions.Judge's over the merged windows, as a run's are.
package judge

import (
	"fmt"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// Testbed is the run record's testbed name for a judged run.
const Testbed = "judge"

// newRecord is the record skeleton of a judged run of sc.
func newRecord(sc *scenario.Scenario, versions map[string]string) *record.Run {
	return &record.Run{SchemaVersion: record.SchemaVersion, Scenario: sc.Name, File: sc.File, Seed: sc.Seed,
		Testbed: Testbed, Versions: versions, Planned: record.Duration(sc.Workload.Duration.Std())}
}

// Fill gives rec its fault timeline, the faults never applied and the
// verdicts, as a run does (assertions.Judge, with the load's own checks
// the record keeps): events are the faults' events (nil when rec already
// holds its timeline, ownFaults), plus the changes a k6 script made
// through the extension, read from the windows.
func Fill(sc *scenario.Scenario, rec *record.Run, events []record.FaultEvent, ownFaults bool) {
	if !ownFaults {
		scripted, err := record.ScriptFaultEvents(rec)
		if err != nil {
			fail(rec, fmt.Errorf("reading the windows: %w", err))
		}
		rec.Faults = record.MergeFaultEvents(events, scripted)
	}
	for _, ev := range rec.Faults {
		if ev.Action == record.Failed {
			fail(rec, fmt.Errorf("fault %s could not be applied: %s", ev.Fault, ev.Error))
		}
	}
	rec.Problems = append(rec.Problems, missingSources(sc, rec)...)
	rec.Problems = append(rec.Problems, assertions.Judge(sc, rec, assertions.ScriptChecksOf(rec))...)
}

// fail marks rec incomplete with err as a problem.
func fail(rec *record.Run, err error) {
	rec.Incomplete = true
	rec.Problems = append(rec.Problems, err.Error())
}

// missingSources says which assertions read what a judge has not: the
// services' /metrics and end checks come only with a run record
// (--faults RUN.json), never in a results stream.
func missingSources(sc *scenario.Scenario, rec *record.Run) []string {
	var out []string
	for _, a := range sc.Assertions {
		m, err := assertions.ParseMetric(a.Metric)
		if err != nil {
			continue
		}
		switch {
		case m.Source == "scrape" && len(rec.Scrapes) == 0:
			out = append(out, fmt.Sprintf("assertion %s reads the services' /metrics, which results streams do not carry: it fails here (give the run record with --faults RUN.json to judge it)", a.Name))
		case m.Name == assertions.EndCheckMetric && len(rec.EndChecks) == 0:
			out = append(out, fmt.Sprintf("assertion %s reads the services' end checks, which results streams do not carry: it fails here (give the run record with --faults RUN.json to judge it)", a.Name))
		}
	}
	return out
}

// shardVerdict is the failing verdict of a shard that never connected or
// whose stream ended without its end marker.
func shardVerdict(name, why string, to time.Duration) record.Verdict {
	return record.Verdict{Assertion: name, Check: "streamed its results to their end", Metric: "results stream",
		Window: assertions.Whole, To: record.Duration(to), Error: why, Source: record.SourceRun}
}
