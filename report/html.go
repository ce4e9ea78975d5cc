package report

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// htmlStyle is shared by the report and the index; everything is inline, the
// page loads nothing at view time.
const htmlStyle = `body{font-family:sans-serif;margin:1.5em auto;padding:0 1.5em;max-width:90em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}.pass{color:#176f2c;font-weight:bold}.fail{color:#b3261e;font-weight:bold}
.headline{font-size:1.3em}.plots figure{margin:0}.plots svg{display:block;margin:.5em 0 1.5em;width:100%;height:auto}
.facts{color:#555}code{background:#f6f6f6;padding:0 .2em}`

var reportTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chaosrun: {{.Run.Scenario}}</title>
<style>{{.Style}}</style></head><body>
<h1>{{.Run.Scenario}}</h1>
<p class="headline {{if .Pass}}pass{{else}}fail{{end}}" id="headline">{{.Headline}}</p>
<table id="verdicts"><thead><tr><th>result</th><th>assertion</th><th>check</th><th>observed</th><th>bound</th><th>window</th><th>samples</th></tr></thead><tbody>
{{range .Verdicts}}<tr><td class="{{if .Pass}}pass{{else}}fail{{end}}">{{.Result}}</td><td>{{.Assertion}}</td><td><code>{{.Check}}</code></td><td>{{.Observed}}</td><td>{{.Bound}}</td><td>{{.Window}}</td><td>{{.Samples}}</td></tr>
{{if .Error}}<tr><td></td><td colspan="6">{{.Error}}</td></tr>
{{end}}{{if .Understated}}<tr><td></td><td colspan="6" class="understated">understated (≥): {{.Understated}}</td></tr>
{{end}}{{end}}</tbody></table>
{{if .Run.Aborted}}<p class="fail" id="aborted">Aborted: {{.Run.Aborted}}</p>{{end}}
{{if .Run.Problems}}<h2>Problems</h2><ul>{{range .Run.Problems}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Effects}}<h2>Fault effects</h2><ul id="effects">{{range .Effects}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Faults}}<h2>Fault timeline</h2>
<table id="faults"><thead><tr><th>fault</th><th>kind</th><th>target</th><th>action</th><th>scheduled</th><th>actual</th><th>detail</th></tr></thead><tbody>
{{range .Faults}}<tr><td>{{.Fault}}</td><td>{{.Kind}}</td><td>{{.Target}}</td><td>{{.Action}}</td><td>{{.Scheduled}}</td><td>{{.Actual}}</td><td>{{.Detail}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .KeyFigures}}<h2>Key figures</h2>
<table id="key-figures"><thead><tr><th>API</th><th>phase</th><th>req/s</th><th>p50</th><th>p99</th><th>failed</th></tr></thead><tbody>
{{range .KeyFigures}}<tr><td>{{.API}}</td><td>{{.Phase}}</td><td>{{.Rate}}</td><td>{{.P50}}</td><td>{{.P99}}</td><td>{{.Failed}}</td></tr>
{{end}}</tbody></table>{{else if .KeyFiguresErr}}<p class="facts" id="key-figures">Key figures not available: {{.KeyFiguresErr}}</p>{{end}}
<p class="facts">seed {{.Run.Seed}} · testbed {{.Run.Testbed}} · load {{.Load}}{{range $k, $v := .Run.Versions}} · {{$k}} {{$v}}{{end}}{{if .Run.Overrides}} · overrides <code>{{.Overrides}}</code>{{end}}</p>
<h2>Plots</h2>
<p class="facts">Shaded: fault windows, from applied to reverted (actual times).</p>
<div class="plots">
{{range .Plots}}<figure class="plot" data-title="{{.Title}}">{{.SVG}}</figure>
{{end}}</div>
</body></html>
`))

type htmlVerdict struct {
	record.Verdict
	Result, Observed, Bound string
}

type htmlFault struct {
	record.FaultEvent
	Scheduled, Actual string
}

type htmlPlot struct {
	Title string
	SVG   template.HTML
}

// HTML renders the run as one self-contained page: the verdict table on
// top, the fault timeline, then an SVG plot per chart with data (see
// Charts), every fault window shaded and labelled.
func HTML(r *record.Run) ([]byte, error) {
	charts, err := Charts(r)
	if err != nil {
		return nil, err
	}
	spans := FaultSpans(r)
	xmax := r.End.Sub(r.Start).Seconds()
	if p := timeDur(r.Planned); p > xmax {
		xmax = p
	}
	data := struct {
		Run                       *record.Run
		Style                     template.CSS
		Pass                      bool
		Headline, Load, Overrides string
		Verdicts                  []htmlVerdict
		Faults                    []htmlFault
		Plots                     []htmlPlot
		Effects                   []string
		KeyFigures                []htmlFigure
		KeyFiguresErr             string
	}{Run: r, Style: template.CSS(htmlStyle), Pass: Passed(r), Headline: Headline(r), Load: timeOf(r.Timings.Load),
		Overrides: strings.Join(r.Overrides, " ")}
	for _, v := range r.Verdicts {
		data.Verdicts = append(data.Verdicts, htmlVerdict{v, result(v), observed(v), bound(v)})
	}
	data.KeyFigures, data.KeyFiguresErr = htmlFigures(r)
	for _, e := range r.FaultEffects {
		data.Effects = append(data.Effects, effect(e))
	}
	for _, f := range r.Faults {
		data.Faults = append(data.Faults, htmlFault{f, "+" + r.Offset(f.Scheduled).Round(1e6).String(), "+" + r.Offset(f.Actual).Round(1e6).String()})
	}
	for _, na := range r.NotApplied {
		ev := record.FaultEvent{Fault: na.Fault, Kind: na.Kind, Target: na.Target, Action: "not applied", Detail: na.Reason}
		data.Faults = append(data.Faults, htmlFault{ev, "+" + time.Duration(na.Start).String(), "-"})
	}
	for _, c := range withBounds(charts, r.Verdicts) {
		svg, err := SVG(c, spans, xmax)
		if err != nil {
			return nil, err
		}
		data.Plots = append(data.Plots, htmlPlot{c.Title, template.HTML(svg)}) // #nosec: drawn here, text escaped by the SVG writer
	}
	var buf bytes.Buffer
	if err := reportTmpl.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("report: html for %s: %w", r.Scenario, err)
	}
	return buf.Bytes(), nil
}

// htmlFigure is one row of the key-figures table, written as the Markdown
// summary writes it.
type htmlFigure struct{ API, Phase, Rate, P50, P99, Failed string }

// htmlFigures returns the key figures' rows, or why there are none.
func htmlFigures(r *record.Run) ([]htmlFigure, string) {
	kf, err := KeyFigures(r)
	if err != nil {
		return nil, err.Error()
	}
	out := make([]htmlFigure, 0, len(kf))
	for _, k := range kf {
		out = append(out, htmlFigure{k.API, k.Phase, num(k.Rate, ""), num(k.P50, "ms"), num(k.P99, "ms"), percent(k.Failed)})
	}
	return out, ""
}

func timeDur(d record.Duration) float64 { return float64(d) / 1e9 }

// WriteHTML writes HTML(r) to path.
func WriteHTML(path string, r *record.Run) error {
	b, err := HTML(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return writeFile(path, b)
}

// IndexEntry is one scenario of a combined report: its record and the
// relative link to its own report page.
type IndexEntry struct {
	Run  *record.Run
	Link string
}

var indexTmpl = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>chaosrun: {{.Headline}}</title>
<style>{{.Style}}</style></head><body>
<h1>chaosrun: {{len .Rows}} scenario(s)</h1>
<p class="headline {{if .Pass}}pass{{else}}fail{{end}}" id="headline">{{.Headline}}</p>
<table id="scenarios"><thead><tr><th>result</th><th>scenario</th><th>checks</th><th>failed</th><th>load</th></tr></thead><tbody>
{{range .Rows}}<tr><td class="{{if .Pass}}pass{{else}}fail{{end}}">{{.Headline}}</td><td><a href="{{.Link}}">{{.Name}}</a></td><td>{{.Checks}}</td><td>{{.Failed}}</td><td>{{.Load}}</td></tr>
{{end}}</tbody></table></body></html>
`))

// IndexHTML renders the index page of a run of several scenarios.
func IndexHTML(entries []IndexEntry) ([]byte, error) {
	type row struct {
		Pass                       bool
		Headline, Name, Link, Load string
		Checks, Failed             int
	}
	data := struct {
		Style    template.CSS
		Pass     bool
		Headline string
		Rows     []row
	}{Style: template.CSS(htmlStyle), Pass: true}
	var runs []*record.Run
	for _, e := range entries {
		rw := row{Pass: Passed(e.Run), Headline: Headline(e.Run), Name: e.Run.Scenario, Link: e.Link, Load: timeOf(e.Run.Timings.Load), Checks: len(e.Run.Verdicts)}
		for _, v := range e.Run.Verdicts {
			if !v.Pass {
				rw.Failed++
			}
		}
		data.Pass = data.Pass && rw.Pass
		data.Rows = append(data.Rows, rw)
		runs = append(runs, e.Run)
	}
	data.Headline = CombinedHeadline(runs)
	var buf bytes.Buffer
	if err := indexTmpl.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("report: index: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteIndex writes IndexHTML(entries) to path.
func WriteIndex(path string, entries []IndexEntry) error {
	b, err := IndexHTML(entries)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return writeFile(path, b)
}

// CombinedHeadline is the verdict over several scenario runs.
func CombinedHeadline(runs []*record.Run) string {
	failed := 0
	for _, r := range runs {
		if !Passed(r) {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Sprintf("BREACH (%d of %d scenarios failed)", failed, len(runs))
	}
	return fmt.Sprintf("PASS (%d scenarios)", len(runs))
}
