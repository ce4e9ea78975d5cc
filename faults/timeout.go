package faults

import "github.com/chaosrun/chaosrun/scenario"

func init() {
	Register("timeout", func(spec scenario.Fault) (Fault, error) {
		summary := "close after " + ms(spec.Attributes, "timeout")
		if spec.Attributes["timeout"] == 0 {
			summary = "blackhole"
		}
		return newToxicFault(spec, "timeout", summary)
	},
		Attr{Name: "timeout", Unit: "ms", Max: MaxMillis, Required: true,
			Doc: "stop data and close the connection after this long; 0 holds data until the fault is reverted"},
	)
}
