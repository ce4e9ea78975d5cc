package scenario

import (
	"regexp"
	"strings"
)

// Match selects the requests an HTTP fault (http_error, http_latency) or
// the calls a gRPC fault (grpc_error, grpc_latency, grpc_reset; path is the
// call's /package.Service/Method, header its metadata) acts on; every condition given must hold, and an absent match selects every
// request.
type Match struct {
	// Method is the request method, e.g. POST.
	Method string `yaml:"method,omitempty" json:"method,omitempty"`
	// Path is a glob over the request path without its query: * is any run
	// of characters (slashes too), ? one character. "/kv/user1*" is a key
	// range.
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// PathRegex is an RE2 expression the path must contain a match of.
	PathRegex string `yaml:"path_regex,omitempty" json:"path_regex,omitempty"`
	// Header maps header field names to globs their value must match
	// (e.g. X-Caller: "rogue-*"), to pick one caller.
	Header map[string]string `yaml:"header,omitempty" json:"header,omitempty"`
}

// EdgeStage is the stage a fault kind needs in front of its edge's service,
// as the kind declares it when it registers.
type EdgeStage string

// The stages: Toxiproxy's toxics alone, or an L7 stage behind them.
const (
	// StageTCP is Toxiproxy's toxics on the connection.
	StageTCP EdgeStage = "tcp"
	// StageHTTP is the HTTP stage: the kind reads requests (and match).
	StageHTTP EdgeStage = "http"
)

// stage is the stage kind declares (Options.FaultStage), StageTCP when
// none is wired.
func (v *validator) stage(kind string) EdgeStage {
	if v.opts.FaultStage == nil || kind == "" {
		return StageTCP
	}
	if st := v.opts.FaultStage(kind); st != "" {
		return st
	}
	return StageTCP
}

// NeedsStage reports whether a fault of the schedule needs st on its edge
// (Fault.Stage, as validation set it from the kind's declaration).
func (s *Scenario) NeedsStage(st EdgeStage) bool {
	for _, f := range s.Faults {
		if f.Stage == st {
			return true
		}
	}
	return false
}

// match checks a fault's match: only HTTP kinds have one, and its method,
// path, regex and header names must be well formed.
func (v *validator) match(p string, f *Fault) {
	m := f.Match
	p += ".match"
	if m == nil || !v.ok(p) {
		return
	}
	if f.Kind != "" && v.opts.FaultStage != nil && f.Stage != StageHTTP {
		v.errf(p, "http_error, http_latency, grpc_error, grpc_latency, grpc_reset", "fault kind %q does not read HTTP requests: match applies to HTTP and gRPC fault kinds only", f.Kind)
		return
	}
	if v.ok(p+".method") && m.Method != "" && !isToken(m.Method) {
		v.errf(p+".method", "a method token such as GET or POST", "method %q is not an HTTP method", m.Method)
	}
	if v.ok(p+".path") && m.Path != "" && !strings.HasPrefix(m.Path, "/") && !strings.HasPrefix(m.Path, "*") {
		v.errf(p+".path", `a glob starting with / or *, e.g. /transact/cash or "/kv/user1*"`, "path %q does not start with / or *", m.Path)
	}
	if v.ok(p+".path_regex") && m.PathRegex != "" {
		if _, err := regexp.Compile(m.PathRegex); err != nil {
			v.errf(p+".path_regex", "an RE2 regular expression", "%s", err.Error())
		}
	}
	for _, name := range sortedKeys(m.Header) {
		if hp := p + ".header." + name; v.ok(hp) && !isToken(name) {
			v.errf(hp, "a header field name such as X-Caller", "header name %q is not a field name", name)
		}
	}
}

// isToken reports whether s is a non-empty HTTP token (RFC 9110 5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
