package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// Point is one value of a time series: X seconds after the run's start.
type Point struct{ X, Y float64 }

// Line is a named time series.
type Line struct {
	Name   string
	Points []Point
}

// Span is a fault window in seconds after the run's start.
type Span struct {
	Name     string
	From, To float64
}

// Chart is one plot of the HTML report: lines over run time, fault windows
// shaded.
type Chart struct {
	Title, YLabel string
	// LogY draws the Y axis in log scale (latencies spanning decades).
	LogY  bool
	Lines []Line
	// Bounds are the assertion bounds drawn on the chart.
	Bounds []Bound
}

// Bound is an assertion's bound on a chart's metric, in the chart's unit.
type Bound struct {
	Name string
	Y    float64
}

// FaultSpans returns every fault's window [applied, reverted) in seconds
// after the run's start; a fault never reverted ends at the run's end.
func FaultSpans(r *record.Run) []Span {
	var out []Span
	open := map[string]int{}
	end := r.End.Sub(r.Start).Seconds()
	for _, f := range r.Faults {
		at := r.Offset(f.Actual).Seconds()
		switch f.Action {
		case record.Applied:
			open[f.Fault] = len(out)
			out = append(out, Span{Name: f.Fault, From: at, To: end})
		case record.Reverted:
			if i, ok := open[f.Fault]; ok {
				out[i].To = at
				delete(open, f.Fault)
			}
		}
	}
	return out
}

// Group names the API (and tier) a series belongs to: its api tag, else
// its name, else its k6 scenario.
func Group(s record.Series) string {
	g := s.Tags["api"]
	if g == "" {
		g = s.Tags["name"]
	}
	if g == "" {
		g = s.Tags["scenario"]
	}
	if t := s.Tags["tier"]; t != "" {
		g += " tier=" + t
	}
	return g
}

// sec is a window's start in seconds after the run's start.
func sec(r *record.Run, t time.Time) float64 { return t.Sub(r.Start).Seconds() }

// LatencyCharts returns, per API (and tier), p50 and p99 of
// http_req_duration (grpc_req_duration for gRPC calls) per one-second
// window, in ms.
func LatencyCharts(r *record.Run) ([]Chart, error) {
	type acc struct{ p50, p99 []Point }
	per := map[string]*acc{}
	err := r.EachWindow(func(w record.Window) error {
		hs := map[string]*record.HistSum{}
		for _, s := range w.Series {
			if !isLatency(s.Metric) || s.Kind != record.Trend || s.Count == 0 || s.Hist == "" {
				continue
			}
			g := Group(s)
			if hs[g] == nil {
				hs[g] = &record.HistSum{}
			}
			if err := hs[g].AddEncoded(s.Hist); err != nil {
				return fmt.Errorf("report: %s %v at +%.0fs: %w", s.Metric, s.Tags, sec(r, w.Start), err)
			}
		}
		for g, h := range hs {
			if per[g] == nil {
				per[g] = &acc{}
			}
			x := sec(r, w.Start) + 0.5
			p50, _ := h.Quantile(50)
			p99, _ := h.Quantile(99)
			per[g].p50 = append(per[g].p50, Point{x, float64(p50) / 1000})
			per[g].p99 = append(per[g].p99, Point{x, float64(p99) / 1000})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Chart
	for _, g := range sortedKeys(per) {
		out = append(out, Chart{Title: "Latency " + g, YLabel: "ms", LogY: true,
			Lines: []Line{{"p50", per[g].p50}, {"p99", per[g].p99}}})
	}
	return out, nil
}

// RateChart returns requests per second per API (http_reqs, and gRPC
// calls: grpc_req_duration's samples) and dropped
// iterations per second per k6 scenario; ok is false when there are none.
func RateChart(r *record.Run) (c Chart, ok bool, err error) {
	lines := map[string][]Point{}
	err = r.EachWindow(func(w record.Window) error {
		sum := map[string]float64{}
		for _, s := range w.Series {
			switch s.Metric {
			case "http_reqs":
				sum[Group(s)] += s.Sum
			case "grpc_req_duration": // a sample a call
				sum[Group(s)] += float64(s.Count)
			case "dropped_iterations":
				sum["dropped "+s.Tags["scenario"]] += s.Sum
			}
		}
		for k, v := range sum {
			lines[k] = append(lines[k], Point{sec(r, w.Start) + 0.5, v})
		}
		return nil
	})
	c, ok = chartOf("Request rate", "req/s", lines)
	return c, ok, err
}

// FailureChart returns failed requests per second by API and status
// (http_req_failed, tagged by k6's status); ok is false when there are none.
func FailureChart(r *record.Run) (c Chart, ok bool, err error) {
	lines := map[string][]Point{}
	err = r.EachWindow(func(w record.Window) error {
		sum := map[string]float64{}
		for _, s := range w.Series {
			if s.Metric == "http_req_failed" && s.NonZero > 0 {
				sum[Group(s)+" status="+s.Tags["status"]] += float64(s.NonZero)
			}
		}
		for k, v := range sum {
			lines[k] = append(lines[k], Point{sec(r, w.Start) + 0.5, v})
		}
		return nil
	})
	c, ok = chartOf("Failed requests by API and status", "req/s", lines)
	return c, ok, err
}

// failedShareTitle is the title of FailedShareChart, where rate bounds go.
const failedShareTitle = "Failed share by API"

// FailedShareChart returns each API's share of failed requests per second
// (http_req_failed's rate; for gRPC, calls whose status is not OK), the
// figure a rate bound such as http_req_failed{api:X} rate < 0.01 judges;
// ok is false when the record has no such samples.
func FailedShareChart(r *record.Run) (c Chart, ok bool, err error) {
	lines := map[string][]Point{}
	err = r.EachWindow(func(w record.Window) error {
		failed, total := map[string]float64{}, map[string]float64{}
		for _, s := range w.Series {
			switch {
			case s.Metric == "http_req_failed" && s.Count > 0:
				failed[Group(s)] += float64(s.NonZero)
				total[Group(s)] += float64(s.Count)
			case s.Metric == "grpc_req_duration" && s.Count > 0:
				failed[Group(s)] += float64(s.GRPCFailures())
				total[Group(s)] += float64(s.Count)
			}
		}
		for k, n := range total {
			lines[k] = append(lines[k], Point{sec(r, w.Start) + 0.5, failed[k] / n})
		}
		return nil
	})
	c, ok = chartOf(failedShareTitle, "share failed", lines)
	return c, ok, err
}

// ScrapeKey is a flattened scrape key split into its parts:
// name{label=value,...}suffix.
type ScrapeKey struct {
	Name   string
	Labels map[string]string
	// Suffix is what follows the labels (histograms' _count and _sum).
	Suffix string
}

// ParseScrapeKey splits a flattened scrape key.
func ParseScrapeKey(k string) ScrapeKey {
	i := strings.IndexByte(k, '{')
	if i < 0 {
		return ScrapeKey{Name: k}
	}
	j := strings.LastIndexByte(k, '}')
	if j < i {
		return ScrapeKey{Name: k}
	}
	sk := ScrapeKey{Name: k[:i], Suffix: k[j+1:], Labels: map[string]string{}}
	for _, kv := range strings.Split(k[i+1:j], ",") {
		if name, v, ok := strings.Cut(kv, "="); ok {
			sk.Labels[name] = v
		}
	}
	return sk
}

// scrapeLines collects the scraped values whose key passes keep, one line per
// instance and key; counters (keep says so) become per-second rates between
// consecutive scrapes of the same instance.
func scrapeLines(r *record.Run, keep func(ScrapeKey) (label string, counter, ok bool)) map[string][]Point {
	type last struct {
		t time.Time
		v float64
	}
	prev := map[string]last{}
	lines := map[string][]Point{}
	for _, sc := range r.Scrapes {
		for k, v := range sc.Values {
			label, counter, ok := keep(ParseScrapeKey(k))
			if !ok {
				continue
			}
			name := sc.Instance + " " + label
			x := sec(r, sc.Time)
			if !counter {
				lines[name] = append(lines[name], Point{x, v})
				continue
			}
			p, seen := prev[name]
			prev[name] = last{sc.Time, v}
			if dt := sc.Time.Sub(p.t).Seconds(); seen && dt > 0 {
				lines[name] = append(lines[name], Point{x, math.Max(0, v-p.v) / dt})
			}
		}
	}
	for _, pts := range lines {
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
	}
	return lines
}

// labelText writes labels as k=v in name order, leaving out skip.
func labelText(l map[string]string, skip ...string) string {
	var parts []string
	for _, k := range sortedKeys(l) {
		if !contains(skip, k) {
			parts = append(parts, k+"="+l[k])
		}
	}
	return strings.Join(parts, ",")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// ScrapeCharts returns the charts drawn from the targets' /metrics: server
// rejections by reason, bulkhead in-flight and rejections, smart-client
// ejections and traffic share per host, hot-key backend reads. A chart is
// there only when its metrics were scraped.
func ScrapeCharts(r *record.Run) []Chart {
	var out []Chart
	add := func(title, unit string, lines map[string][]Point) {
		if c, ok := chartOf(title, unit, lines); ok {
			out = append(out, c)
		}
	}
	add("Server rejections by reason", "req/s", scrapeLines(r, func(k ScrapeKey) (string, bool, bool) {
		return labelText(k.Labels), true, k.Name == "platform_rejected_total" || k.Name == "platform_bulkhead_rejected_total"
	}))
	add("Bulkhead in flight", "calls", scrapeLines(r, func(k ScrapeKey) (string, bool, bool) {
		return labelText(k.Labels), false, k.Name == "platform_bulkhead_inflight"
	}))
	add("Client ejections", "per s / hosts", scrapeLines(r, func(k ScrapeKey) (string, bool, bool) {
		ok := strings.HasPrefix(k.Name, "platform_client_") && strings.Contains(k.Name, "eject")
		return strings.TrimPrefix(k.Name, "platform_client_") + " " + labelText(k.Labels), strings.HasSuffix(k.Name, "_total"), ok
	}))
	if share := trafficShare(r); len(share) > 0 {
		add("Traffic share per host", "share", share)
	}
	add("Hot-key backend reads", "reads/s", scrapeLines(r, func(k ScrapeKey) (string, bool, bool) {
		ok := strings.Contains(k.Name, "backend_read") || strings.Contains(k.Name, "hotkey") || strings.Contains(k.Name, "hot_key")
		return k.Name + " " + labelText(k.Labels), strings.HasSuffix(k.Name, "_total"), ok && k.Suffix == ""
	}))
	return out
}

// trafficShare is each host's share of a client's requests per second, from
// platform_client_host_requests_total{host=...}.
func trafficShare(r *record.Run) map[string][]Point {
	rates := scrapeLines(r, func(k ScrapeKey) (string, bool, bool) {
		_, host := k.Labels["host"]
		return labelText(k.Labels, "code", "status", "result"), true, k.Name == "platform_client_host_requests_total" && host
	})
	// Sum per (instance, x) over hosts, keyed by the line name without host.
	type slot struct {
		client string
		x      float64
	}
	total := map[slot]float64{}
	for name, pts := range rates {
		for _, p := range pts {
			total[slot{clientOf(name), p.X}] += p.Y
		}
	}
	out := map[string][]Point{}
	for name, pts := range rates {
		for _, p := range pts {
			if t := total[slot{clientOf(name), p.X}]; t > 0 {
				out[name] = append(out[name], Point{p.X, p.Y / t})
			}
		}
	}
	return out
}

// clientOf strips the host label from a line name so that hosts of one
// client share a total.
func clientOf(name string) string {
	var kept []string
	for _, f := range strings.FieldsFunc(name, func(r rune) bool { return r == ',' || r == ' ' }) {
		if !strings.HasPrefix(f, "host=") {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, " ")
}

func chartOf(title, unit string, lines map[string][]Point) (Chart, bool) {
	c := Chart{Title: title, YLabel: unit}
	for _, k := range sortedKeys(lines) {
		if len(lines[k]) > 0 {
			c.Lines = append(c.Lines, Line{Name: k, Points: lines[k]})
		}
	}
	return c, len(c.Lines) > 0
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Charts returns every chart the record has data for, in report order.
func Charts(r *record.Run) ([]Chart, error) {
	out, err := LatencyCharts(r)
	if err != nil {
		return nil, err
	}
	for _, chart := range []func(*record.Run) (Chart, bool, error){RateChart, FailureChart, FailedShareChart} {
		c, ok, err := chart(r)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, c)
		}
	}
	return append(out, ScrapeCharts(r)...), nil
}
