package metrics

import (
	"strings"

	"github.com/chaosrun/chaosrun/record"
)

// Prefix starts every exported metric name.
const Prefix = "chaosrun_"

// The labels every exported series carries (besides Options.Labels).
const (
	LabelJob      = "job" // always "chaosrun"
	LabelRun      = "chaosrun_run"
	LabelScenario = "chaosrun_scenario"
)

// Quantiles are the latency quantiles exported per window.
var Quantiles = []float64{0.5, 0.9, 0.95, 0.99, 0.999}

// reserved label names: a k6 tag or target label of that name is exported
// as tag_NAME, so that it cannot shadow the export's own labels.
var reserved = map[string]bool{
	LabelJob: true, LabelRun: true, LabelScenario: true,
	"instance": true, "service": true, "quantile": true, "le": true,
}

// RunID names one run in the chaosrun_run label: its scenario and the
// instant its load started, to the millisecond.
func RunID(r *record.Run) string {
	return r.Scenario + "@" + r.Start.UTC().Format("2006-01-02T15:04:05.000Z")
}

// sanitize makes s a valid Prometheus metric or label name: every
// character but [a-zA-Z0-9_] becomes '_', and a leading digit gets a '_'.
func sanitize(s string) string {
	var sb strings.Builder
	for i, c := range s {
		ok := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')
		switch {
		case ok:
			sb.WriteRune(c)
		case i == 0 && c >= '0' && c <= '9':
			sb.WriteByte('_')
			sb.WriteRune(c)
		default:
			sb.WriteByte('_')
		}
	}
	if sb.Len() == 0 {
		return "_"
	}
	return sb.String()
}

// labelName is the exported name of a k6 tag or a target's label.
func labelName(k string, extra map[string]string) string {
	n := sanitize(k)
	if _, clash := extra[n]; clash || reserved[n] || strings.HasPrefix(n, "__") {
		n = "tag_" + strings.TrimLeft(n, "_")
	}
	return n
}

// tagLabels turns a tag map into labels, in any order.
func tagLabels(tags map[string]string, extra map[string]string) []Label {
	out := make([]Label, 0, len(tags))
	for k, v := range tags {
		out = append(out, Label{labelName(k, extra), v})
	}
	return out
}

// k6Name is the exported name of a k6 metric, before its suffix.
func k6Name(metric string) string { return Prefix + "k6_" + sanitize(metric) }
