package faults

import (
	"fmt"

	"github.com/chaosrun/chaosrun/scenario"
)

func init() {
	RegisterStage(KindHTTPError, scenario.StageHTTP, func(spec scenario.Fault) (Fault, error) {
		status := int64(503)
		if v, ok := spec.Attributes["status"]; ok {
			status = int64(v)
		}
		attrs := map[string]any{"status": status}
		summary := fmt.Sprint(status)
		if ra := int64(spec.Attributes["retry_after"]); ra > 0 {
			attrs["retry_after"] = ra
			summary += fmt.Sprintf(" Retry-After %ds", ra)
		}
		return newHTTPFault(spec, attrs, summary)
	},
		Attr{Name: "status", Unit: "HTTP status", Min: 200, Max: 599, Doc: "status of the answer, without forwarding the request (default 503)"},
		Attr{Name: "retry_after", Unit: "s", Max: 86400, Doc: "adds Retry-After with this many seconds when > 0"},
	)
}
