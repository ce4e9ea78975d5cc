package faults

import (
	"errors"

	"github.com/chaosrun/chaosrun/scenario"
)

func init() {
	RegisterStage(KindHTTPLatency, scenario.StageHTTP, func(spec scenario.Fault) (Fault, error) {
		a := spec.Attributes
		lat, jit, p99 := int64(a["latency"]), int64(a["jitter"]), int64(a["p99"])
		attrs := map[string]any{"latency": lat}
		summary := ms(a, "latency")
		switch {
		case jit > 0 && p99 > 0:
			return nil, errors.New(`http_latency: attributes "jitter" (uniform) and "p99" (lognormal) exclude each other`)
		case jit > 0:
			attrs["jitter"] = jit
			summary += " ±" + ms(a, "jitter") + " uniform"
		case p99 > 0:
			if p99 <= lat {
				return nil, errors.New(`http_latency: attribute "p99" must exceed "latency" (the median) for a lognormal delay`)
			}
			attrs["p99"] = p99
			summary = "lognormal median " + summary + " p99 " + ms(a, "p99")
		}
		return newHTTPFault(spec, attrs, summary+" per request")
	},
		Attr{Name: "latency", Unit: "ms", Min: 1, Max: MaxMillis, Required: true, Doc: "delay of each matched request, before it is forwarded (the median of a lognormal delay)"},
		Attr{Name: "jitter", Unit: "ms", Max: MaxMillis, Doc: "uniform delay in latency ± jitter"},
		Attr{Name: "p99", Unit: "ms", Max: MaxMillis, Doc: "lognormal delay with this 99th percentile"},
	)
}
