package faults

import "github.com/chaosrun/chaosrun/scenario"

func init() {
	Register("bandwidth", func(spec scenario.Fault) (Fault, error) {
		return newToxicFault(spec, "bandwidth", fmtNum(spec.Attributes["rate"])+"KB/s")
	},
		Attr{Name: "rate", Unit: "KB/s", Max: 10_000_000, Required: true, Doc: "bandwidth limit"},
	)
}
