package faults

import (
	"fmt"

	"github.com/chaosrun/chaosrun/scenario"
)

// gRPC fault kinds: toxics of the same HTTP stage, acting on gRPC calls
// (HTTP/2 with prior knowledge); match.path selects a service and method
// ("/helloworld.Greeter/*"), match.header a caller's metadata.
const (
	KindGRPCError   = "grpc_error"
	KindGRPCLatency = "grpc_latency"
	KindGRPCReset   = "grpc_reset"
)

func init() {
	RegisterStage(KindGRPCError, scenario.StageHTTP, func(spec scenario.Fault) (Fault, error) {
		code := int64(14)
		if v, ok := spec.Attributes["code"]; ok {
			code = int64(v)
		}
		if code < 1 || code > 16 {
			return nil, fmt.Errorf("grpc_error: code %d (allowed: 1..16, a gRPC status other than OK)", code)
		}
		attrs := map[string]any{"code": code}
		summary := fmt.Sprintf("status %d (%s)", code, scenario.GRPCCodes[code])
		if pb := int64(spec.Attributes["pushback_ms"]); pb > 0 {
			attrs["pushback_ms"] = pb
			summary += fmt.Sprintf(" pushback %dms", pb)
		}
		return newHTTPFault(spec, attrs, summary+" per call")
	},
		Attr{Name: "code", Unit: "gRPC status", Min: 1, Max: 16, Doc: "status of the answer, without forwarding the call (default 14, UNAVAILABLE)"},
		Attr{Name: "pushback_ms", Unit: "ms", Max: MaxMillis, Doc: "adds grpc-retry-pushback-ms with this many milliseconds when > 0"},
	)
	RegisterStage(KindGRPCLatency, scenario.StageHTTP, func(spec scenario.Fault) (Fault, error) {
		a := spec.Attributes
		attrs := map[string]any{"latency": int64(a["latency"])}
		summary := ms(a, "latency")
		if jit := int64(a["jitter"]); jit > 0 {
			attrs["jitter"] = jit
			summary += " ±" + ms(a, "jitter") + " uniform"
		}
		where := " per call"
		if a["response"] == 1 {
			attrs["response"] = int64(1)
			where = " per call, on its response headers"
		}
		return newHTTPFault(spec, attrs, summary+where)
	},
		Attr{Name: "latency", Unit: "ms", Min: 1, Max: MaxMillis, Required: true, Doc: "delay of each matched call, before it is forwarded (or with response: 1, before its response headers)"},
		Attr{Name: "jitter", Unit: "ms", Max: MaxMillis, Doc: "uniform delay in latency ± jitter"},
		Attr{Name: "response", Unit: "0 or 1", Max: 1, Doc: "1: forward the call at once and hold its response headers, once the server has answered, for the delay"},
	)
	RegisterStage(KindGRPCReset, scenario.StageHTTP, func(spec scenario.Fault) (Fault, error) {
		attrs := map[string]any{}
		summary := "RST_STREAM per call"
		if spec.Attributes["goaway"] == 1 {
			attrs["goaway"] = int64(1)
			summary = "GOAWAY on the call's connection"
		}
		return newHTTPFault(spec, attrs, summary)
	},
		Attr{Name: "goaway", Unit: "0 or 1", Max: 1, Doc: "1: end the call's whole connection with GOAWAY instead of resetting its stream"},
	)
}
