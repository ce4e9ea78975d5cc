package faults

import "github.com/chaosrun/chaosrun/scenario"

func init() {
	Register("reset_peer", func(spec scenario.Fault) (Fault, error) {
		return newToxicFault(spec, "reset_peer", "after "+ms(spec.Attributes, "timeout"))
	},
		Attr{Name: "timeout", Unit: "ms", Max: MaxMillis, Doc: "reset the connection (TCP RST) after this long; 0 at once"},
	)
}
