package record

import (
	"sort"
)

// scriptFaultMetric is the counter the extension's Toxiproxy client adds
// to on every change a k6 script makes, tagged proxy, toxic and action.
const scriptFaultMetric = "resilience_fault_events"

// ScriptFaultEvents turns the changes a k6 script made through the
// extension's Toxiproxy client into fault events (to the second of the
// window that counted them), so that plots shade them like scheduled
// faults: add_toxic/remove_toxic open and close "TOXIC@PROXY", and
// disable/enable open and close "proxy_down@PROXY".
func ScriptFaultEvents(r *Run) ([]FaultEvent, error) {
	var out []FaultEvent
	err := r.EachWindow(func(w Window) error {
		var opens, closes []FaultEvent
		for _, s := range w.Series {
			if s.Metric != scriptFaultMetric || s.Count == 0 {
				continue
			}
			proxy, toxic := s.Tags["proxy"], s.Tags["toxic"]
			ev := FaultEvent{Kind: "script", Target: proxy, Scheduled: w.Start, Actual: w.Start, Detail: "by the k6 script"}
			switch s.Tags["action"] {
			case "add_toxic":
				ev.Fault, ev.Action = toxic+"@"+proxy, Applied
				opens = append(opens, ev)
			case "remove_toxic":
				ev.Fault, ev.Action = toxic+"@"+proxy, Reverted
				closes = append(closes, ev)
			case "disable":
				ev.Fault, ev.Action = "proxy_down@"+proxy, Applied
				opens = append(opens, ev)
			case "enable":
				ev.Fault, ev.Action = "proxy_down@"+proxy, Reverted
				closes = append(closes, ev)
			}
		}
		// Within one second the order is unknown: a fault that ends in the
		// second it began shows as an empty span, not as one left open.
		byName := func(evs []FaultEvent) {
			sort.Slice(evs, func(i, j int) bool { return evs[i].Fault < evs[j].Fault })
		}
		byName(opens)
		byName(closes)
		out = append(append(out, opens...), closes...)
		return nil
	})
	return out, err
}

// MergeFaultEvents merges two time-ordered event lists by actual time.
func MergeFaultEvents(a, b []FaultEvent) []FaultEvent {
	out := append(append([]FaultEvent(nil), a...), b...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Actual.Before(out[j].Actual) })
	return out
}
