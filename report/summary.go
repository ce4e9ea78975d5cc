package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
)

// KeyFigure is what one API did in one phase of a run.
type KeyFigure struct {
	API, Phase string
	// Rate is requests per second; P50 and P99 are latencies in ms;
	// Failed is the failed fraction.
	Rate, P50, P99, Failed float64
	Requests               int64
}

// KeyFigures returns, per API, its request rate, p50 and p99 latency and
// failure rate before, during and after every fault (or over the whole run
// when it had no faults).
func KeyFigures(r *record.Run) ([]KeyFigure, error) {
	var (
		out  []KeyFigure
		p50  = stat{Agg: record.Agg{Func: record.AggMed}}
		p99  = stat{Agg: record.Agg{Func: record.AggP, P: 99}}
		rate = stat{Agg: record.Agg{Func: record.AggRate}}
	)
	names, err := apis(r)
	if err != nil {
		return nil, err
	}
	for _, api := range names {
		dur, err := assertions.ParseMetric("http_req_duration{api:" + quoteTag(api) + "}")
		if err != nil {
			return nil, err
		}
		failed, err := assertions.ParseMetric("http_req_failed{api:" + quoteTag(api) + "}")
		if err != nil {
			return nil, err
		}
		for _, ph := range phases(r) {
			from, to, desc, ok := ph.resolve(r)
			if !ok {
				continue
			}
			dc, err := cellsIn(r, dur, from, to, p50)
			if err != nil {
				return nil, err
			}
			fc, err := cellsIn(r, failed, from, to, rate)
			if err != nil {
				return nil, err
			}
			k := KeyFigure{API: api, Phase: desc}
			k.P50, _ = aggregate(dc, p50)
			k.P99, _ = aggregate(dc, p99)
			k.Rate, _ = aggregate(dc, rate)
			k.Failed, _ = aggregate(fc, rate)
			for i := range dc {
				k.Requests += dc[i].Samples()
			}
			out = append(out, k)
		}
	}
	return out, nil
}

// keyFiguresMarkdown is the key-figures table of a run's summary.
func keyFiguresMarkdown(r *record.Run) string {
	kf, err := KeyFigures(r)
	if err != nil {
		return fmt.Sprintf("\n\n### Key figures\n\nnot available: %v\n", err)
	}
	if len(kf) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n### Key figures\n\n| API | phase | req/s | p50 | p99 | failed |\n|---|---|---|---|---|---|\n")
	for _, k := range kf {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", k.API, k.Phase, num(k.Rate, ""), num(k.P50, "ms"), num(k.P99, "ms"), percent(k.Failed))
	}
	return strings.TrimRight(b.String(), "\n")
}

func percent(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) }

// Summary is the Markdown summary of several scenario runs, for a pull
// request comment or $GITHUB_STEP_SUMMARY: the verdict per scenario first,
// then each scenario's summary with its key figures, then what changed
// against the baseline when d is not nil.
func Summary(runs []*record.Run, d *Diff) string {
	var b strings.Builder
	icon := "✅"
	for _, r := range runs {
		if !Passed(r) {
			icon = "❌"
		}
	}
	fmt.Fprintf(&b, "# %s chaosrun: %s\n\n", icon, CombinedHeadline(runs))
	b.WriteString("| scenario | verdict | checks failed |\n|---|---|---|\n")
	for _, r := range runs {
		var failed []string
		for _, v := range r.Verdicts {
			if !v.Pass {
				failed = append(failed, v.Assertion)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Scenario, Headline(r), strings.Join(failed, ", "))
	}
	for _, r := range runs {
		b.WriteString("\n")
		b.WriteString(Markdown(r))
	}
	if d != nil {
		b.WriteString("\n")
		b.WriteString(strings.Replace(d.Markdown(), "### ", "## ", 1))
	}
	return b.String()
}

// WriteSummary writes Summary(runs, d) to path.
func WriteSummary(path string, runs []*record.Run, d *Diff) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return writeFile(path, []byte(Summary(runs, d)))
}

// WriteCombined writes the report of a run of several scenarios into dir:
// index.html (linking each scenario's <name>/report.html), summary.md and
// junit.xml over all of them.
func WriteCombined(dir string, runs []*record.Run) error {
	var entries []IndexEntry
	for _, r := range runs {
		entries = append(entries, IndexEntry{Run: r, Link: r.Scenario + "/report.html"})
	}
	if err := WriteIndex(filepath.Join(dir, "index.html"), entries); err != nil {
		return err
	}
	if err := WriteSummary(filepath.Join(dir, "summary.md"), runs, nil); err != nil {
		return err
	}
	return WriteJUnit(filepath.Join(dir, "junit.xml"), runs...)
}
