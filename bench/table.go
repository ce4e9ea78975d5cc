package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// ResultsVersion is the layout version of results.json.
const ResultsVersion = 1

// Results is what one bench run measured: results.json.
type Results struct {
	Version  int       `json:"version"`
	Date     string    `json:"date"`
	Machine  Machine   `json:"machine"`
	Command  string    `json:"command"`
	Wall     string    `json:"wall"`
	Sections []Section `json:"sections"`
	// Notes say what the run did differently from the full bench (a
	// subset, a substituted tool) and what went wrong.
	Notes []string `json:"notes,omitempty"`
}

// Machine describes where the run happened; no paths, no host names.
type Machine struct {
	Description string            `json:"description"`
	CPUs        int               `json:"cpus"`
	OS          string            `json:"os"`
	Go          string            `json:"go"`
	Tools       map[string]string `json:"tools,omitempty"`
}

// Section is one part of the bench: its figures and the raw data behind them.
type Section struct {
	Name  string  `json:"name"`
	Rows  []Row   `json:"rows"`
	Error string  `json:"error,omitempty"`
	Secs  float64 `json:"seconds"`
	// Text is printed below the rows as it is (benchstat's table).
	Text string `json:"text,omitempty"`
	// Detail is the section's raw data (the steps of a search, …).
	Detail any `json:"detail,omitempty"`
}

// Row is one figure: a value, the reference it is compared with in the same
// run, their ratio and, where the issue sets one, a goal on the ratio or value.
type Row struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Ref names the reference; RefValue is its value in the same run.
	Ref      string  `json:"ref,omitempty"`
	RefValue float64 `json:"ref_value,omitempty"`
	// Ratio is Value/RefValue, absent without a reference.
	Ratio *float64 `json:"ratio,omitempty"`
	Goal  *Goal    `json:"goal,omitempty"`
	// Pass says whether the goal was met; absent without a goal.
	Pass *bool  `json:"pass,omitempty"`
	Note string `json:"note,omitempty"`
	// Minor rows are in the text table and results.json, not the table in docs/figures.md.
	Minor bool `json:"minor,omitempty"`
}

// Goal bounds a row's ratio (or its value when OnValue).
type Goal struct {
	Op      string  `json:"op"` // "<=", ">=" or "~" (within Bound of 1)
	Bound   float64 `json:"bound"`
	OnValue bool    `json:"on_value,omitempty"`
}

// String is how the table shows the goal: "ratio ≥ 0.9", "≤ 20 ms".
func (g Goal) String() string {
	op := map[string]string{"<=": "≤", ">=": "≥"}[g.Op]
	b := strconv.FormatFloat(g.Bound, 'f', -1, 64)
	if g.Op == "~" {
		return "ratio 1 ± " + b
	}
	if g.OnValue {
		return op + " " + b
	}
	return "ratio " + op + " " + b
}

// Met reports whether v meets the goal.
func (g Goal) Met(v float64) bool {
	switch g.Op {
	case "<=":
		return v <= g.Bound
	case ">=":
		return v >= g.Bound
	case "~":
		return math.Abs(v-1) <= g.Bound
	}
	return false
}

// AtLeast is a goal that the ratio is at least b.
func AtLeast(b float64) *Goal { return &Goal{Op: ">=", Bound: b} }

// AtMost is a goal that the ratio is at most b.
func AtMost(b float64) *Goal { return &Goal{Op: "<=", Bound: b} }

// ValueAtMost is a goal that the value itself is at most b.
func ValueAtMost(b float64) *Goal { return &Goal{Op: "<=", Bound: b, OnValue: true} }

// Within is a goal that the ratio lies within b of 1.
func Within(b float64) *Goal { return &Goal{Op: "~", Bound: b} }

// Finish computes the row's ratio and whether its goal is met. A goal on a
// ratio without a usable reference fails.
func (r *Row) Finish() {
	r.Ratio, r.Pass = nil, nil
	if r.Ref != "" && r.RefValue != 0 && !math.IsNaN(r.Value) && !math.IsInf(r.Value, 0) {
		q := r.Value / r.RefValue
		r.Ratio = &q
	}
	if r.Goal == nil {
		return
	}
	ok := false
	switch {
	case r.Goal.OnValue:
		ok = !math.IsNaN(r.Value) && r.Goal.Met(r.Value)
	case r.Ratio != nil:
		ok = r.Goal.Met(*r.Ratio)
	}
	r.Pass = &ok
}

// Finish finishes every row of every section.
func (res *Results) Finish() {
	for i := range res.Sections {
		for j := range res.Sections[i].Rows {
			res.Sections[i].Rows[j].Finish()
		}
	}
}

// Goals counts the rows with a goal and those that met it.
func (res *Results) Goals() (met, total int) {
	for _, s := range res.Sections {
		for _, r := range s.Rows {
			if r.Pass != nil {
				total++
				if *r.Pass {
					met++
				}
			}
		}
	}
	return met, total
}

// fmtNum prints a number with about three significant digits, no exponent
// below a billion.
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case a == 0:
		return "0"
	case a >= 1e9:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 0.995:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// cells are a row's printed columns: figure, value, reference, ratio, goal.
func (r Row) cells() []string {
	val := fmtNum(r.Value)
	if r.Unit != "" {
		val += " " + r.Unit
	}
	ref := ""
	if r.Ref != "" {
		ref = r.Ref
		if r.RefValue != 0 {
			ref += " (" + fmtNum(r.RefValue) + ")"
		}
	}
	ratio := ""
	if r.Ratio != nil {
		ratio = fmtNum(*r.Ratio) + "×"
	}
	goal := ""
	if r.Goal != nil {
		goal = r.Goal.String()
		if r.Goal.OnValue && r.Unit != "" {
			goal += " " + r.Unit
		}
		if r.Pass != nil {
			if *r.Pass {
				goal += " ✓"
			} else {
				goal += " ✗"
			}
		}
	}
	name := r.Name
	if r.Note != "" {
		name += " [" + r.Note + "]"
	}
	return []string{name, val, ref, ratio, goal}
}

// WriteText prints the results as an aligned table, one block per section.
func (res *Results) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, s := range res.Sections {
		fmt.Fprintf(tw, "== %s (%.0f s)\n", s.Name, s.Secs)
		if s.Error != "" {
			fmt.Fprintf(tw, "  error: %s\n", s.Error)
		}
		for _, r := range s.Rows {
			fmt.Fprintf(tw, "  %s\n", strings.Join(r.cells(), "\t"))
		}
		if s.Text != "" {
			if err := tw.Flush(); err != nil {
				return err
			}
			for line := range strings.Lines(s.Text) {
				fmt.Fprintf(w, "    %s", line)
			}
			fmt.Fprintln(w)
		}
	}
	met, total := res.Goals()
	fmt.Fprintf(tw, "goals met: %d of %d; wall time %s\n", met, total, res.Wall)
	for _, n := range res.Notes {
		fmt.Fprintf(tw, "note: %s\n", n)
	}
	return tw.Flush()
}

// WriteMarkdown prints the results as one Markdown table, for docs/figures.md;
// minor rows are left out.
func (res *Results) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| section | figure | value | reference (same run) | ratio | goal |\n|---|---|---|---|---|---|\n")
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, s := range res.Sections {
		label := "**" + esc(s.Name) + "**" // on the section's first row only
		if s.Error != "" {
			fmt.Fprintf(&b, "| %s | error | %s | | | |\n", label, esc(s.Error))
			label = ""
		}
		for _, r := range s.Rows {
			if r.Minor {
				continue
			}
			c := r.cells()
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", label, esc(c[0]), esc(c[1]), esc(c[2]), c[3], c[4])
			label = ""
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Save writes the results as indented JSON, atomically.
func (res *Results) Save(path string) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return os.Rename(tmp, path)
}

// Load reads a results.json.
func Load(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if res.Version != ResultsVersion {
		return nil, fmt.Errorf("%s: results version %d; this bench reads version %d", path, res.Version, ResultsVersion)
	}
	return &res, nil
}

// secs is a duration in seconds, for JSON.
func secs(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

// mergeResults replaces the sections of the results in into with those of
// the results in from (by name; new ones are added at the end) and notes
// which run each came from; a replaced section's note of where it came
// from replaces the old one, and a note already there is not added again.
func mergeResults(into, from string, stdout io.Writer) error {
	base, err := Load(into)
	if err != nil {
		return err
	}
	part, err := Load(from)
	if err != nil {
		return err
	}
	for _, s := range part.Sections {
		i := slices.IndexFunc(base.Sections, func(b Section) bool { return b.Name == s.Name })
		if i < 0 {
			base.Sections = append(base.Sections, s)
		} else {
			base.Sections[i] = s
		}
		from := s.Name + ": from a run of "
		note := fmt.Sprintf("%s%s (`%s`, %s)", from, part.Date, part.Command, part.Wall)
		if j := slices.IndexFunc(base.Notes, func(n string) bool { return strings.HasPrefix(n, from) }); j >= 0 {
			base.Notes[j] = note
		} else {
			base.Notes = append(base.Notes, note)
		}
	}
	for _, n := range part.Notes {
		if n = "that run: " + n; !slices.Contains(base.Notes, n) {
			base.Notes = append(base.Notes, n)
		}
	}
	if base.Machine.Tools == nil {
		base.Machine.Tools = map[string]string{}
	}
	maps.Copy(base.Machine.Tools, part.Machine.Tools)
	base.Finish()
	if err := base.Save(into); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d section(s) from %s\n", into, len(part.Sections), from)
	return nil
}
