package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// Table writes the comparison for a terminal: what changed significantly
// (regressions first), then, with all, the figures that did not change
// or could not be compared; without all a line counts those.
func (d *Diff) Table(w io.Writer, all bool) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "VERDICT\tSCENARIO\tFIGURE\tWINDOW\tBASE\tHEAD\tCHANGE\n")
	shown := d.shown(all)
	for _, c := range shown {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Verdict, c.Scenario, c.Name, c.Window,
			num(c.Base, c.Unit), num(c.Head, c.Unit), c.change())
	}
	tw.Flush()
	if hidden := len(d.Changes) - len(shown); hidden > 0 {
		fmt.Fprintf(w, "%d figure(s) unchanged or not compared are not shown (--all shows them)\n", hidden)
	}
	for _, p := range d.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	fmt.Fprintln(w, d.Headline())
}

// Headline sums the comparison up in one line.
func (d *Diff) Headline() string {
	n := map[string]int{}
	for _, c := range d.Changes {
		n[c.Verdict]++
	}
	switch {
	case d.common() == 0:
		return "NOTHING COMPARED: no scenario has records on both sides"
	case n[NotCompared] == len(d.Changes):
		return fmt.Sprintf("NOTHING COMPARED: none of %d figures could be compared", len(d.Changes))
	case n[Regression] > 0:
		return fmt.Sprintf("REGRESSION: %d of %d figures significantly worse (%d better)", n[Regression], len(d.Changes), n[Improvement])
	}
	return fmt.Sprintf("no significant regression: %d figures compared, %d significantly better", len(d.Changes)-n[NotCompared], n[Improvement])
}

// ordered returns regressions, then improvements, then the rest, each in
// their original order.
func (d *Diff) ordered() []Change {
	out := append([]Change(nil), d.Changes...)
	sort.SliceStable(out, func(i, j int) bool {
		return slices.Index(verdicts, out[i].Verdict) < slices.Index(verdicts, out[j].Verdict)
	})
	return out
}

// shown are the changes a table shows: every one with all, else those
// that changed significantly; in order.
func (d *Diff) shown(all bool) []Change {
	var out []Change
	for _, c := range d.ordered() {
		if all || c.Verdict == Regression || c.Verdict == Improvement || c.Verdict == WorseInfo {
			out = append(out, c)
		}
	}
	return out
}

// change is the change in one column: relative, then the median's change
// with its interval; why when the figure was not compared.
func (c Change) change() string {
	if c.Verdict == NotCompared {
		return "- (" + c.Why + ")"
	}
	return fmt.Sprintf("%s: median %s [%s, %s]", pct(float64(c.Rel)), signed(c.HeadMedian-c.BaseMedian, c.Unit), signed(c.Lo, c.Unit), signed(c.Hi, c.Unit))
}

func signed(x float64, unit string) string {
	s := num(x, unit)
	if x >= 0 {
		s = "+" + s
	}
	return s
}

func pct(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "new"
	case math.IsInf(r, -1):
		return "gone"
	}
	return fmt.Sprintf("%+.1f%%", 100*r)
}

// Markdown writes what changed against the baseline: regressions and
// improvements in a table, the count of unchanged figures after.
func (d *Diff) Markdown() string {
	var b strings.Builder
	icon := "✅"
	switch {
	case d.Regressed():
		icon = "❌"
	case d.Compared() == 0:
		icon = "⚠️"
	}
	fmt.Fprintf(&b, "### %s Against the baseline: %s\n\n", icon, d.Headline())
	if shown := d.shown(false); len(shown) > 0 {
		b.WriteString("| verdict | scenario | figure | window | base | head | change |\n|---|---|---|---|---|---|---|\n")
		for _, c := range shown {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", c.Verdict, c.Scenario, c.Name, c.Window,
				num(c.Base, c.Unit), num(c.Head, c.Unit), c.change())
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Noise: median over %d-second blocks, %d bootstrap replicates over blocks (and runs), %g%% one-sided; a change must also exceed %g%% and its unit's floor. Gating: assertion checks and figures during faults.\n",
		d.Options.Block, d.Options.Iterations, 100*d.Options.Confidence, 100*d.Options.MinChange)
	for _, p := range d.Problems {
		fmt.Fprintf(&b, "\n- %s", p)
	}
	if len(d.Problems) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// CompareFiles compares the run records at base and head (files, or
// folders of them). A record that cannot be read or used is an error with
// no Diff; ErrNothingCompared comes with the Diff, which says why. It
// gives up when ctx ends.
func CompareFiles(ctx context.Context, base, head string, o DiffOptions) (*Diff, error) {
	b, err := ReadComparableRuns(ctx, []string{base})
	if err != nil {
		return nil, fmt.Errorf("base: %w", err)
	}
	h, err := ReadComparableRuns(ctx, []string{head})
	if err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	d, err := Compare(b, h, o)
	if err != nil && !errors.Is(err, ErrNothingCompared) {
		return nil, err
	}
	return d, err
}

// WriteFiles writes the comparison as JSON to jsonPath and as Markdown
// to mdPath; an empty path is not written.
func (d *Diff) WriteFiles(jsonPath, mdPath string) error {
	if jsonPath != "" {
		b, err := d.JSON()
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonPath, b, 0o644); err != nil {
			return err
		}
	}
	if mdPath != "" {
		return os.WriteFile(mdPath, []byte(d.Markdown()), 0o644)
	}
	return nil
}
