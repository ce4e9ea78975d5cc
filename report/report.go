// Package report turns run records and their verdicts into what people
// read: the terminal verdict table, Markdown summaries, JUnit XML, a
// self-contained HTML page with SVG plots, the JSON record itself, and the
// comparison of two sets of records (Compare, behind `chaosrun diff`).
package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// Passed reports whether every verdict of the run passed and the run is
// complete and was not aborted.
func Passed(r *record.Run) bool {
	if r.Incomplete || r.Aborted != "" || len(r.Verdicts) == 0 {
		return false
	}
	for _, v := range r.Verdicts {
		if !v.Pass {
			return false
		}
	}
	return true
}

// Failed names the assertions whose verdicts in r fail, in order.
func Failed(r *record.Run) []string {
	var failed []string
	for _, v := range r.Verdicts {
		if !v.Pass {
			failed = append(failed, v.Assertion)
		}
	}
	return failed
}

// writeFile writes atomically: a reader never sees half a report.
func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// Table writes the verdict table: one row per assertion check.
func Table(w io.Writer, r *record.Run) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "RESULT\tASSERTION\tCHECK\tOBSERVED\tBOUND\tWINDOW\n")
	for _, v := range r.Verdicts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", result(v), v.Assertion, v.Check, observed(v), bound(v), v.Window)
	}
	tw.Flush()
	for _, v := range r.Verdicts {
		if v.Error != "" {
			fmt.Fprintf(w, "  %s: %s\n", v.Assertion, v.Error)
		}
		if v.Understated != "" {
			fmt.Fprintf(w, "  %s: understated (≥): %s\n", v.Assertion, v.Understated)
		}
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	for _, na := range r.NotApplied {
		fmt.Fprintf(w, "not applied: %s\n", notApplied(na))
	}
	for _, e := range r.FaultEffects {
		fmt.Fprintf(w, "fault effect: %s\n", effect(e))
	}
	if r.Aborted != "" {
		fmt.Fprintf(w, "aborted: %s\n", r.Aborted)
	}
	fmt.Fprintf(w, "%s: %s\n", r.Scenario, Headline(r))
}

// effect says what a fault moved, in one line.
func effect(e record.FaultEffect) string {
	switch {
	case e.Unjudged != "":
		return fmt.Sprintf("%s not judged: %s", e.Fault, e.Unjudged)
	case len(e.Moved) == 0:
		return fmt.Sprintf("%s moved none of %d observed series beyond run-to-run noise", e.Fault, e.Compared)
	}
	return fmt.Sprintf("%s moved %s (of %d series)", e.Fault, strings.Join(e.Moved, ", "), e.Compared)
}

// notApplied says which fault was not applied, where and why.
func notApplied(na record.NotApplied) string {
	return fmt.Sprintf("fault %s (%s on %s, planned at +%s): %s", na.Fault, na.Kind, na.Target, time.Duration(na.Start), na.Reason)
}

// Headline is the one-word verdict with counts.
func Headline(r *record.Run) string {
	failed, na := 0, 0
	for _, v := range r.Verdicts {
		if !v.Pass {
			failed++
		}
		if v.NotApplicable != "" {
			na++
		}
	}
	switch {
	case r.Incomplete:
		return fmt.Sprintf("INCOMPLETE (%d of %d checks failed)", failed, len(r.Verdicts))
	case r.Aborted != "":
		return fmt.Sprintf("ABORTED by an abortOnFail check (%d of %d checks failed)", failed, len(r.Verdicts))
	case len(r.Verdicts) == 0:
		return "NO CHECKS (a scenario without assertions proves nothing)"
	case failed > 0:
		return fmt.Sprintf("BREACH (%d of %d checks failed)", failed, len(r.Verdicts))
	case na > 0:
		return fmt.Sprintf("PASS (%d checks, %d of them n/a)", len(r.Verdicts), na)
	default:
		return fmt.Sprintf("PASS (%d checks)", len(r.Verdicts))
	}
}

func result(v record.Verdict) string {
	if v.NotApplicable != "" {
		return "n/a"
	}
	if v.Pass {
		return "pass"
	}
	return "FAIL"
}

func observed(v record.Verdict) string {
	if v.NotApplicable != "" || v.Error != "" && v.Samples == 0 {
		return "-"
	}
	if v.Understated != "" {
		return "≥" + num(v.Observed, v.Unit) // a floor: see Understated
	}
	return num(v.Observed, v.Unit)
}

func bound(v record.Verdict) string {
	if v.NotApplicable != "" {
		return "-"
	}
	return num(v.Bound, v.Unit)
}

func num(x float64, unit string) string {
	s := fmt.Sprintf("%.4g", x)
	switch {
	case !strings.Contains(s, "e"):
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		s = fmt.Sprintf("%.0f", x) // 20000ms, not 20000.00ms
	default:
		s = fmt.Sprintf("%.2f", x)
	}
	return s + unit
}

// Markdown is the run's summary for a pull request or a step summary:
// the verdicts first, then the fault timeline and key figures.
func Markdown(r *record.Run) string {
	var b strings.Builder
	icon := "✅"
	if !Passed(r) {
		icon = "❌"
	}
	fmt.Fprintf(&b, "## %s %s: %s\n\n", icon, r.Scenario, Headline(r))
	b.WriteString("| result | assertion | check | observed | bound | window |\n|---|---|---|---|---|---|\n")
	for _, v := range r.Verdicts {
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s |\n", result(v), v.Assertion, v.Check, observed(v), bound(v), v.Window)
	}
	for _, v := range r.Verdicts {
		if v.Error != "" {
			fmt.Fprintf(&b, "\n- **%s**: %s", v.Assertion, v.Error)
		}
		if v.Understated != "" {
			fmt.Fprintf(&b, "\n- **%s** understated (≥): %s", v.Assertion, v.Understated)
		}
	}
	if r.Aborted != "" {
		fmt.Fprintf(&b, "\n\n**Aborted**: %s\n", r.Aborted)
	}
	if len(r.Problems) > 0 {
		b.WriteString("\n\n**Problems**\n\n")
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(p, "\n", " "))
		}
	}
	if len(r.FaultEffects) > 0 {
		b.WriteString("\n\n**Fault effects** (medians of 2-second blocks, during against before)\n\n")
		for _, e := range r.FaultEffects {
			fmt.Fprintf(&b, "- %s\n", effect(e))
		}
	}
	b.WriteString(keyFiguresMarkdown(r))
	if len(r.Faults) > 0 || len(r.NotApplied) > 0 {
		b.WriteString("\n\n### Fault timeline\n\n| fault | kind | target | action | scheduled | actual | skew |\n|---|---|---|---|---|---|---|\n")
		for _, f := range r.Faults {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | +%s | +%s | %s |\n", f.Fault, f.Kind, f.Target, f.Action,
				r.Offset(f.Scheduled).Round(1e6), r.Offset(f.Actual).Round(1e6), f.Actual.Sub(f.Scheduled).Round(1e5))
		}
		for _, na := range r.NotApplied {
			fmt.Fprintf(&b, "| %s | %s | %s | not applied: %s | +%s | - | - |\n", na.Fault, na.Kind, na.Target, na.Reason, time.Duration(na.Start))
		}
	}
	fmt.Fprintf(&b, "\nseed %d · testbed %s · load %s · start-up %s · teardown %s\n", r.Seed, r.Testbed,
		timeOf(r.Timings.Load), timeOf(r.Timings.Startup), timeOf(r.Timings.Teardown))
	if len(r.Overrides) > 0 {
		fmt.Fprintf(&b, "\noverrides: `%s`\n", strings.Join(r.Overrides, "`, `"))
	}
	return b.String()
}

// timeOf writes a duration for people: to the millisecond.
func timeOf(d record.Duration) string {
	return time.Duration(d).Round(time.Millisecond).String()
}

// WriteMarkdown writes Markdown(r) to path.
func WriteMarkdown(path string, r *record.Run) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return writeFile(path, []byte(Markdown(r)))
}
