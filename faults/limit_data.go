package faults

import "github.com/chaosrun/chaosrun/scenario"

func init() {
	Register("limit_data", func(spec scenario.Fault) (Fault, error) {
		return newToxicFault(spec, "limit_data", "close after "+fmtNum(spec.Attributes["bytes"])+" bytes")
	},
		Attr{Name: "bytes", Unit: "bytes", Max: 1 << 40, Required: true, Doc: "close the connection after this many bytes"},
	)
}
