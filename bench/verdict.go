package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// verdictSubset is the part of the catalog run with -catalog subset (or
// -docker-catalog subset, the default): one scenario per kind of fault
// (a sharded fleet with a TCP fault; a bank with an HTTP-stage fault),
// 70 s of load in all.
var verdictSubset = []string{"kv-tier-shedding.yaml", "http-retry-storm.yaml"}

// catalogRun is one `chaosrun run` over a list of scenarios.
type catalogRun struct {
	Testbed   string             `json:"testbed"`
	Scenarios []string           `json:"scenarios"`
	ExitCode  int                `json:"exit_code"`
	Wall      float64            `json:"wall_s"`
	Planned   float64            `json:"planned_load_s"`
	Timings   map[string]float64 `json:"timings_s"`
	Verdicts  map[string]string  `json:"verdicts"`
	Faults    lagStats           `json:"faults"`
	// WorstFault is each scenario's latest fault event: its lag and which.
	WorstFault map[string]string `json:"worst_fault_by_scenario,omitempty"`
}

// plannedLoad sums the scenarios' load durations, after the overrides.
func plannedLoad(files []string, sets ...string) (time.Duration, error) {
	var sum time.Duration
	for _, f := range files {
		sc, err := scenario.Load(f, scenario.Options{})
		if err == nil {
			err = scenario.Apply(sc, sets)
		}
		if err != nil {
			return 0, err
		}
		sum += sc.LoadDuration()
	}
	return sum, nil
}

// runCatalog runs `chaosrun run` on files and reads their run records.
func (b *bench) runCatalog(ctx context.Context, testbed string, files []string, sets ...string) (catalogRun, error) {
	cr := catalogRun{Testbed: testbed, Timings: map[string]float64{}, Verdicts: map[string]string{}, WorstFault: map[string]string{}}
	planned, err := plannedLoad(files, sets...)
	if err != nil {
		return cr, err
	}
	cr.Planned = planned.Seconds()
	out := filepath.Join(b.tmp, "verdict-"+testbed)
	args := []string{"run", "--quiet", "--testbed", testbed, "--out-dir", out}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(b.root, f)
		cr.Scenarios = append(cr.Scenarios, rel)
	}
	args = append(args, cr.Scenarios...)
	b.logf("  chaosrun %s", strings.Join(args, " "))
	res, err := runCmd(ctx, planned+time.Duration(len(files))*3*time.Minute, b.root, nil, b.chaosrun, args...)
	if err != nil {
		return cr, err
	}
	cr.ExitCode, cr.Wall = res.Code, res.Wall.Seconds()
	recs, _ := filepath.Glob(filepath.Join(out, "*", "run.json"))
	sort.Strings(recs)
	var events []record.FaultEvent
	for _, p := range recs {
		raw, err := os.ReadFile(p)
		if err != nil {
			return cr, err
		}
		var r record.Run
		if err := json.Unmarshal(raw, &r); err != nil {
			return cr, fmt.Errorf("%s: %w", filepath.Base(filepath.Dir(p)), err)
		}
		cr.Timings["build"] += time.Duration(r.Timings.Build).Seconds()
		cr.Timings["startup"] += time.Duration(r.Timings.Startup).Seconds()
		cr.Timings["load"] += time.Duration(r.Timings.Load).Seconds()
		cr.Timings["teardown"] += time.Duration(r.Timings.Teardown).Seconds()
		cr.Verdicts[r.Scenario] = verdictOf(r)
		events = append(events, r.Faults...)
		if st := faultLags(r.Faults); st.Events > 0 {
			cr.WorstFault[r.Scenario] = fmt.Sprintf("%.1f ms: %s", st.Max, st.Worst)
		}
	}
	cr.Faults = faultLags(events)
	if len(recs) != len(files) || (res.Code != 0 && res.Code != 1) {
		return cr, fmt.Errorf("chaosrun run exited %d with %d run records of %d scenarios: %s", res.Code, len(recs), len(files), lastLines(string(res.Out), 15))
	}
	return cr, nil
}

// verdictOf says how a run ended: pass, breach or incomplete.
func verdictOf(r record.Run) string {
	if r.Incomplete {
		return "incomplete"
	}
	for _, v := range r.Verdicts {
		if !v.Pass {
			return "breach"
		}
	}
	return "pass"
}

// verdictRows turns a catalog run into the section's rows.
func verdictRows(cr catalogRun, what string, faultGoalMs float64) []Row {
	sum := cr.Timings["build"] + cr.Timings["startup"] + cr.Timings["load"] + cr.Timings["teardown"]
	rows := []Row{
		{Name: fmt.Sprintf("time to verdict, %s, %s", what, cr.Testbed), Value: cr.Wall, Unit: "s", Ref: "planned load", RefValue: cr.Planned,
			Note: fmt.Sprintf("%d scenarios, exit %d", len(cr.Scenarios), cr.ExitCode)},
	}
	for _, k := range []string{"build", "startup", "load", "teardown"} {
		rows = append(rows, Row{Name: "  " + k, Value: cr.Timings[k], Unit: "s", Ref: "wall", RefValue: cr.Wall})
	}
	rows = append(rows, Row{Name: "  other (validation, assertions, reports, process start)", Value: max(cr.Wall-sum, 0), Unit: "s", Ref: "wall", RefValue: cr.Wall})
	if cr.Faults.Events > 0 {
		rows = append(rows, Row{Name: fmt.Sprintf("fault applied − scheduled, p99 (%s, %d events)", cr.Testbed, cr.Faults.Events),
			Value: cr.Faults.P99ms, Unit: "ms", Goal: ValueAtMost(faultGoalMs),
			Note: fmt.Sprintf("p50 %.2f ms; latest %.1f ms, %s", cr.Faults.P50ms, cr.Faults.Max, cr.Faults.Worst)})
	}
	return rows
}

// verdictSection times `chaosrun run` over the catalog (or its subset)
// on the local testbed, and on Docker with -docker; a testbed that ran the
// subset gets an estimate for the full catalog.
func (b *bench) verdictSection(ctx context.Context) (Section, error) {
	sec := Section{Name: "time to verdict (chaosrun run)"}
	all, err := filepath.Glob(filepath.Join(b.root, "scenarios", "*.yaml"))
	if err != nil || len(all) == 0 {
		return sec, fmt.Errorf("no scenarios in scenarios/: %v", err)
	}
	sort.Strings(all)
	fullPlanned, err := plannedLoad(all)
	if err != nil {
		return sec, err
	}
	detail := map[string]any{"chaosrun_build_s": b.chaosrunBuild.Seconds()}
	sec.Detail = detail
	sec.Rows = append(sec.Rows, Row{Name: "chaosrun binary build (go build, warm module cache)", Value: b.chaosrunBuild.Seconds(), Unit: "s"})
	// The fault precision goals: 20 ms locally, 100 ms on Docker.
	type testbed struct {
		name, catalog string
		faultGoalMs   float64
	}
	beds := []testbed{{"local", b.cfg.catalog, 20}}
	if b.cfg.docker {
		beds = append(beds, testbed{"docker", b.cfg.dockCatalog, 100})
	}
	for _, bed := range beds {
		files, what, sets := all, "full catalog", []string(nil)
		switch {
		case b.cfg.quick:
			files, what, sets = []string{filepath.Join(b.root, "scenarios", "bank-overload.yaml")}, "one scenario, load cut to 8 s", []string{"workload.duration=8s"}
		case bed.catalog == "subset":
			files, what = nil, "catalog subset"
			for _, f := range verdictSubset {
				files = append(files, filepath.Join(b.root, "scenarios", f))
			}
			b.notes = append(b.notes, fmt.Sprintf("time to verdict on %s ran %d of the %d catalog scenarios (%s) to keep the bench short; the full catalog's line is an estimate from them",
				bed.name, len(files), len(all), strings.Join(verdictSubset, ", ")))
		}
		cr, err := b.runCatalog(ctx, bed.name, files, sets...)
		detail[bed.name] = cr
		if err != nil {
			return sec, fmt.Errorf("%s: %w", bed.name, err)
		}
		sec.Rows = append(sec.Rows, verdictRows(cr, what, bed.faultGoalMs)...)
		if len(files) < len(all) && !b.cfg.quick {
			perScenario := (cr.Wall - cr.Planned) / float64(len(files))
			est := fullPlanned.Seconds() + perScenario*float64(len(all))
			sec.Rows = append(sec.Rows, Row{Name: fmt.Sprintf("full catalog (%d scenarios), %s, estimated", len(all), bed.name), Value: est, Unit: "s",
				Ref: "planned load", RefValue: fullPlanned.Seconds(), Note: "planned load + the subset's overhead per scenario"})
		}
	}
	return sec, nil
}
