package faults

import "github.com/chaosrun/chaosrun/scenario"

func init() {
	Register("slow_close", func(spec scenario.Fault) (Fault, error) {
		return newToxicFault(spec, "slow_close", "delayed by "+ms(spec.Attributes, "delay"))
	},
		Attr{Name: "delay", Unit: "ms", Max: MaxMillis, Required: true, Doc: "delay before the connection closes"},
	)
}
