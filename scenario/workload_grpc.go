package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// GRPC makes a stream's requests unary gRPC calls: the body is the
// request message written as JSON (a template like an HTTP body).
type GRPC struct {
	// Method is the method called, package.Service/Method.
	Method string `yaml:"method" json:"method"`
	// Proto is the .proto file that defines the method, relative to the
	// scenario's folder; or Reflect asks the server's reflection service
	// when load starts.
	Proto   string `yaml:"proto,omitempty" json:"proto,omitempty"`
	Reflect bool   `yaml:"reflect,omitempty" json:"reflect,omitempty"`
	// ImportPaths are where Proto's imports are looked up, relative to
	// the scenario's folder (which is looked in last).
	ImportPaths []string `yaml:"import_paths,omitempty" json:"import_paths,omitempty"`
	// Metadata is sent with each call; values are templates like headers.
	Metadata map[string]string `yaml:"metadata,omitempty" json:"metadata,omitempty"`
	// Deadline bounds each call; default the stream's timeout.
	Deadline Duration `yaml:"deadline,omitempty" json:"deadline,omitempty"`
	// Expect lists the codes a call's check passes on (OK, NOT_FOUND, …;
	// k6's checks metric); none: no checks.
	Expect []string `yaml:"expect,omitempty" json:"expect,omitempty"`
}

// GRPCCodes are gRPC's status codes by name, in code order (OK is 0).
var GRPCCodes = []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// GRPCCode is the number of a gRPC status code's name, -1 for none.
func GRPCCode(name string) int { return slices.Index(GRPCCodes, name) }

var metadataNamePattern = regexp.MustCompile(`^[a-z0-9_.-]+$`)

// grpcStream checks a gRPC stream: no HTTP fields, a method, one source
// of descriptors, metadata, deadline and codes. The engine's check reads
// the .proto file.
func (v *validator) grpcStream(p string, st *Stream) {
	g, gp := st.GRPC, p+".grpc"
	for _, f := range []struct {
		name string
		set  bool
	}{{"path", st.Path != ""}, {"headers", len(st.Headers) > 0}, {"client", st.Client != nil}, {"expect", len(st.Expect) > 0}} {
		if f.set {
			v.keyErrf(p+"."+f.name, "", "%s", grpcRefusal(f.name))
		}
	}
	if st.Method != "" && v.ok(p+".method") {
		v.keyErrf(p+".method", "", "a gRPC stream has no HTTP method: grpc.method names the call (package.Service/Method)")
	}
	if v.ok(gp+".method") && g.Method == "" {
		v.missing(gp+".method", "package.Service/Method")
	}
	switch {
	case !v.ok(gp+".proto") || !v.ok(gp+".reflect"):
	case g.Proto == "" && !g.Reflect:
		v.missing(gp+".proto", "a .proto file relative to the scenario, or reflect: true")
	case g.Proto != "" && g.Reflect:
		v.errf(gp+".reflect", "", "proto and reflect both set: the method comes from one of them")
	case g.Reflect && len(g.ImportPaths) > 0:
		v.keyErrf(gp+".import_paths", "", "import_paths are for proto:, not reflect")
	}
	for _, k := range sortedKeys(g.Metadata) {
		mp := gp + ".metadata." + k
		if !metadataNamePattern.MatchString(k) || strings.HasPrefix(k, "grpc-") {
			v.keyErrf(mp, "lower-case letters, digits, _ . and -, not starting grpc-", "invalid metadata key %q", k)
		}
		v.workloadTemplate(mp, g.Metadata[k], st.Keys, false)
	}
	if v.nonNegative(gp+".deadline", g.Deadline) && g.Deadline.Std() > MaxTimeout {
		v.errf(gp+".deadline", "at most "+MaxTimeout.String(), "deadline %s is too long", g.Deadline.Std())
	}
	for i, c := range g.Expect {
		if ep := fmt.Sprintf("%s.expect[%d]", gp, i); v.ok(ep) && GRPCCode(c) < 0 {
			v.errf(ep, strings.Join(GRPCCodes, ", "), "unknown gRPC code %q", c)
		}
	}
	for i, m := range st.Metrics {
		if m.When.Header != "" {
			v.errf(fmt.Sprintf("%s.metrics[%d].when.header", p, i), "", "a gRPC stream's metrics read codes (when.status), not headers")
		}
	}
}

// grpcRefusal says why a gRPC stream does not take an HTTP field.
func grpcRefusal(field string) string {
	switch field {
	case "client":
		return "client models are for HTTP streams: a gRPC stream sends each arrival once (leave client: out)"
	case "expect":
		return "a gRPC stream's checks are grpc.expect, by code name (expect: [OK])"
	}
	return fmt.Sprintf("a gRPC stream has no %s: the call is grpc.method, its metadata grpc.metadata", field)
}
