package faults

import "github.com/chaosrun/chaosrun/scenario"

func init() {
	Register("latency", func(spec scenario.Fault) (Fault, error) {
		summary := ms(spec.Attributes, "latency")
		if spec.Attributes["jitter"] > 0 {
			summary += " ±" + ms(spec.Attributes, "jitter")
		}
		return newToxicFault(spec, "latency", summary)
	},
		Attr{Name: "latency", Unit: "ms", Max: MaxMillis, Required: true, Doc: "delay added to data"},
		Attr{Name: "jitter", Unit: "ms", Max: MaxMillis, Doc: "random variation of the delay, ±"},
	)
}
