package report

import (
	"errors"
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
// when it had no faults). It reads r's windows once for the APIs, then
// once for every figuresPerPass figures, holding an accumulator a figure,
// not one a second.
func KeyFigures(r *record.Run) ([]KeyFigure, error) {
	names, err := apis(r)
	if err != nil {
		return nil, err
	}
	var (
		out  []KeyFigure
		accs []figureAcc
	)
	for _, api := range sortedKeys(names) {
		dur, err := assertions.ParseMetric(names[api] + "{api:" + quoteTag(api) + "}")
		if err != nil {
			return nil, err
		}
		failed, err := assertions.ParseMetric("http_req_failed{api:" + quoteTag(api) + "}")
		if err != nil {
			return nil, err
		}
		grpc := names[api] == "grpc_req_duration"
		for _, ph := range phases(r) {
			from, to, desc, ok := ph.resolve(r)
			if !ok {
				continue
			}
			rng := assertions.Range{From: r.Start.Add(from), To: r.Start.Add(to)}
			out = append(out, KeyFigure{API: api, Phase: desc})
			accs = append(accs, figureAcc{rng: rng, dur: dur, failed: failed, grpc: grpc, durAcc: record.Acc{Quantiles: true}})
		}
	}
	for lo := 0; lo < len(accs); lo += figuresPerPass {
		batch := accs[lo:min(lo+figuresPerPass, len(accs))]
		err := r.EachWindow(func(w record.Window) error {
			for i := range batch {
				if err := batch[i].add(w); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for i := range batch {
			batch[i].fill(&out[lo+i])
			batch[i] = figureAcc{} // its histogram sum goes
		}
	}
	return out, nil
}

// figuresPerPass is how many key figures one reading of a run's windows
// accumulates: a figure holds a histogram sum (about 200 KB once dense),
// and each reading of windows from disk decodes them all.
const figuresPerPass = 32

// figureAcc accumulates one key figure over the seconds wholly inside
// rng: what cellsIn's cells, aggregated, would give.
type figureAcc struct {
	rng             assertions.Range
	dur, failed     assertions.Metric
	durAcc, failAcc record.Acc
	secs            int
	// grpc: the API's calls are gRPC calls; a failed one is a sample of
	// grpc_req_duration whose status is not "0" (OK).
	grpc  bool
	nonOK int64
}

// add adds w's series when w lies inside the figure's range.
func (f *figureAcc) add(w record.Window) error {
	if !f.rng.Contains(w.Start) {
		return nil
	}
	f.secs++
	for _, s := range w.Series {
		if err := addMatching(&f.durAcc, f.dur, w, s); err != nil {
			return err
		}
		if f.grpc && f.dur.Matches(s) {
			f.nonOK += s.GRPCFailures()
		}
		if err := addMatching(&f.failAcc, f.failed, w, s); err != nil {
			return err
		}
	}
	return nil
}

// addMatching adds s, of w, to acc when m matches it; its errors are
// cellsIn's.
func addMatching(acc *record.Acc, m assertions.Metric, w record.Window, s record.Series) error {
	if !m.Matches(s) {
		return nil
	}
	err := acc.Add(s)
	if mixed := (*record.MixedKindsError)(nil); errors.As(err, &mixed) {
		return fmt.Errorf("%s matches %w", m, err)
	}
	if err != nil {
		return fmt.Errorf("%s at %s: %w", m, w.Start.Format("15:04:05"), err)
	}
	return nil
}

// fill sets k's figures.
func (f *figureAcc) fill(k *KeyFigure) {
	secs := float64(f.secs)
	k.P50, _ = f.durAcc.Value(record.Agg{Func: record.AggMed}, secs)
	k.P99, _ = f.durAcc.Value(record.Agg{Func: record.AggP, P: 99}, secs)
	k.Rate, _ = f.durAcc.Value(record.Agg{Func: record.AggRate}, secs)
	k.Failed, _ = f.failAcc.Value(record.Agg{Func: record.AggRate}, secs)
	k.Requests = f.durAcc.Samples()
	if f.grpc && k.Requests > 0 {
		k.Failed = float64(f.nonOK) / float64(k.Requests)
	}
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
