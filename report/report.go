// Package report turns run records and their verdicts into what people
// read: the terminal verdict table, Markdown summaries, JUnit XML, a
// self-contained HTML page with SVG plots, the JSON record itself, and the
// comparison of two sets of records (Compare, behind `chaosrun diff`).
package report

import (
	"fmt"
	"io"
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
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	for _, na := range r.NotApplied {
		fmt.Fprintf(w, "not applied: %s\n", notApplied(na))
	}
	if r.Aborted != "" {
		fmt.Fprintf(w, "aborted: %s\n", r.Aborted)
	}
	fmt.Fprintf(w, "%s: %s\n", r.Scenario, Headline(r))
}

// notApplied says which fault was not applied, where and why.
func notApplied(na record.NotApplied) string {
	return fmt.Sprintf("fault %s (%s on %s, planned at +%s): %s", na.Fault, na.Kind, na.Target, time.Duration(na.Start), na.Reason)
}

// Headline is the one-word verdict with counts.
func Headline(r *record.Run) string {
	failed := 0
	for _, v := range r.Verdicts {
		if !v.Pass {
			failed++
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
	default:
		return fmt.Sprintf("PASS (%d checks)", len(r.Verdicts))
	}
}

func result(v record.Verdict) string {
	if v.Pass {
		return "pass"
	}
	return "FAIL"
}

func observed(v record.Verdict) string {
	if v.Error != "" && v.Samples == 0 {
		return "-"
	}
	return num(v.Observed, v.Unit)
}

func bound(v record.Verdict) string { return num(v.Bound, v.Unit) }

func num(x float64, unit string) string {
	s := fmt.Sprintf("%.4g", x)
	if strings.Contains(s, "e") {
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
