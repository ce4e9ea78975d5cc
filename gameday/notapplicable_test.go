package gameday

import (
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// TestNotApplicableWithoutFaults: on a day with no fault injected, a check
// of a fault's window or against the baseline before one is n/a (passes,
// says why); checks of the whole day, the script's checks and every check
// of a day with a fault are judged as they came.
func TestNotApplicableWithoutFaults(t *testing.T) {
	defs := []scenario.Assertion{
		{Name: "during", Window: "during slow-vault", Checks: scenario.Checks("p(99) < 100")},
		{Name: "after", Window: "after", Checks: scenario.Checks("rate < 0.01")},
		{Name: "vs-baseline", Checks: scenario.Checks("p(99) < 2 * baseline")},
		{Name: "vs-whole", Baseline: "whole", Checks: scenario.Checks("p(99) < 2 * baseline")},
		{Name: "whole", Checks: scenario.Checks("rate < 0.01")},
	}
	verdicts := func() []record.Verdict {
		var vs []record.Verdict
		for _, d := range defs {
			vs = append(vs, record.Verdict{Assertion: d.Name, Check: d.Checks[0].Threshold, Window: "whole", Error: "no samples"})
		}
		return append(vs, record.Verdict{Assertion: "during", Source: record.SourceScript, Check: "p(99)<100"})
	}
	applied := []record.FaultEvent{{Fault: "slow-vault", Action: record.Applied}, {Fault: "slow-vault", Action: record.Reverted}}
	for _, tc := range []struct {
		name   string
		faults []record.FaultEvent
		na     []string
	}{
		{"no fault injected", nil, []string{"during", "after", "vs-baseline"}},
		{"a fault planned but never applied", []record.FaultEvent{{Fault: "slow-vault", Action: record.Failed}}, []string{"during", "after", "vs-baseline"}},
		{"a fault injected", applied, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &record.Run{Faults: tc.faults, Verdicts: verdicts()}
			markNotApplicable(defs, rec)
			var na []string
			for _, v := range rec.Verdicts {
				if v.NotApplicable == "" {
					if v.Pass {
						t.Errorf("%s (%s) changed: %+v", v.Assertion, v.Source, v)
					}
					continue
				}
				na = append(na, v.Assertion)
				if !v.Pass || v.Error != "" || !strings.Contains(v.NotApplicable, "no fault was injected") {
					t.Errorf("%s: %+v", v.Assertion, v)
				}
			}
			if strings.Join(na, ",") != strings.Join(tc.na, ",") {
				t.Errorf("n/a: %v, want %v", na, tc.na)
			}
		})
	}
	rec := &record.Run{Verdicts: verdicts()}
	markNotApplicable(defs, rec)
	if rec.Verdicts[0].Window != "during slow-vault (no fault injected)" {
		t.Errorf("an n/a verdict's window is %q, want the assertion's own", rec.Verdicts[0].Window)
	}
}
