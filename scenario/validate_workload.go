package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

var (
	streamNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	keyNamePattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	tagNamePattern    = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	headerNamePattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	methods           = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
	// engineTags are set by the engine on every series.
	engineTags = []string{"scenario", "method", "status", "expected_response", "model"}
)

// MaxTimeout is the longest request timeout of a stream.
const MaxTimeout = 10 * time.Minute

// nativeWorkload checks a workload of request streams.
func (v *validator) nativeWorkload() {
	w := v.s.Workload
	if w.Script != "" && v.ok("workload.script") {
		v.errf("workload.script", "", "a script is run by engine k6; the native engine runs streams: (set engine: k6, or leave the script out)")
	}
	if len(w.Params) > 0 {
		v.keyErrf("workload.params", "", "params are a k6 script's environment; the native engine runs streams:")
	}
	if w.K6 != nil && v.ok("workload.k6") {
		v.keyErrf("workload.k6", "", "k6 outputs and flags are for engine k6; the native engine runs streams:")
	}
	v.targets()
	if v.ok("workload.connections") && (w.Connections < 0 || w.Connections > 100000) {
		v.errf("workload.connections", "1 to 100000 (0: from the rates)", "connections %d out of range", w.Connections)
	}
	if !v.ok("workload.streams") {
		return
	}
	names := w.streamNames()
	if len(names) == 0 {
		v.missing("workload.streams", "named request streams; or a k6 script:")
		return
	}
	kinds := map[string]string{}
	for _, name := range names {
		p := "workload.streams." + name
		st := w.Streams[name]
		if st == nil {
			v.errf(p, "", "empty stream: it needs at least target, path and arrival")
			continue
		}
		if !streamNamePattern.MatchString(name) {
			v.keyErrf(p, "letters, digits, _ and -", "invalid stream name %q", name)
		}
		v.stream(p, st)
		for i, m := range st.Metrics {
			if k, ok := kinds[m.Name]; ok && k != m.Kind {
				v.errf(fmt.Sprintf("%s.metrics[%d].kind", p, i), k, "metric %s is a %s in another stream", m.Name, k)
			}
			kinds[m.Name] = m.Kind
		}
	}
}

// streamNames lists streams in file order (sorted for workloads built in Go).
func (w *Workload) streamNames() []string {
	if len(w.StreamOrder) == len(w.Streams) {
		ok := true
		for _, n := range w.StreamOrder {
			_, found := w.Streams[n]
			ok = ok && found
		}
		if ok {
			return w.StreamOrder
		}
	}
	return sortedKeys(w.Streams)
}

// stream checks one stream at path p.
func (v *validator) stream(p string, st *Stream) {
	w := v.s.Workload
	switch {
	case !v.ok(p + ".target"):
	case st.Target == "":
		v.missing(p+".target", allowedList(v.s.serviceNames()))
	case v.s.Services[st.Target] == nil:
		v.errf(p+".target", allowedList(v.s.serviceNames()), "unknown service %q", st.Target)
	case len(w.Targets) > 0 && !slices.Contains(w.Targets, st.Target):
		v.errf(p+".target", allowedList(w.Targets), "service %q is not among workload.targets", st.Target)
	}
	if st.GRPC != nil {
		v.grpcStream(p, st)
	} else {
		v.httpStream(p, st)
	}
	if v.nonNegative(p+".timeout", st.Timeout) && st.Timeout.Std() > MaxTimeout {
		v.errf(p+".timeout", "at most "+MaxTimeout.String(), "timeout %s is too long", st.Timeout.Std())
	}
	if v.ok(p+".workers") && (st.Workers < 0 || st.Workers > 100000) {
		v.errf(p+".workers", "1 to 100000 (0: from the rate)", "workers %d out of range", st.Workers)
	}
	v.keyStreams(p+".keys", st.Keys)
	v.workloadTemplate(p+".path", st.Path, st.Keys, false)
	v.workloadTemplate(p+".body", st.Body, st.Keys, false)
	v.tags(p, st)
	v.arrival(p+".arrival", &st.Arrival)
	v.client(p+".client", st.Client)
	v.metrics(p+".metrics", st.Metrics)
}

// httpStream checks an HTTP stream's method, path, headers and statuses.
func (v *validator) httpStream(p string, st *Stream) {
	if st.Method != "" && !slices.Contains(methods, st.Method) && v.ok(p+".method") {
		v.errf(p+".method", strings.Join(methods, ", "), "unknown method %q", st.Method)
	}
	if v.ok(p+".path") && !strings.HasPrefix(st.Path, "/") {
		if st.Path == "" {
			v.missing(p+".path", "a path starting with /")
		} else {
			v.errf(p+".path", "a path starting with /", "invalid path %q", st.Path)
		}
	}
	for _, h := range sortedKeys(st.Headers) {
		if !headerNamePattern.MatchString(h) {
			v.keyErrf(p+".headers."+h, "an HTTP header name", "invalid header name %q", h)
		}
		v.workloadTemplate(p+".headers."+h, st.Headers[h], st.Keys, false)
	}
	for i, s := range st.Expect {
		v.status(fmt.Sprintf("%s.expect[%d]", p, i), s)
	}
}

// status checks an HTTP status (0: no answer).
func (v *validator) status(p string, s int) {
	if v.ok(p) && (s < 0 || s > 599) {
		v.errf(p, "0 (no answer) or 100 to 599", "status %d out of range", s)
	}
}

// workloadTemplate checks a workload template's placeholders at p.
func (v *validator) workloadTemplate(p, text string, keys map[string]*KeyStream, inTags bool) {
	if !v.ok(p) {
		return
	}
	allowed := Placeholders(keys, inTags)
	for _, part := range ParseTemplate(text) {
		if part.Name != "" && !slices.Contains(allowed, part.Name) {
			list := make([]string, len(allowed))
			for i, a := range allowed {
				list[i] = "{" + a + "}"
			}
			v.errf(p, allowedList(list), "unknown placeholder {%s}", part.Name)
		}
	}
}

// tags checks a stream's tags and tag_values.
func (v *validator) tags(p string, st *Stream) {
	for _, k := range sortedKeys(st.Tags) {
		tp := p + ".tags." + k
		switch {
		case !tagNamePattern.MatchString(k):
			v.keyErrf(tp, "lower-case letters, digits and _", "invalid tag name %q", k)
		case slices.Contains(engineTags, k):
			v.keyErrf(tp, "", "tag %s is set by the engine", k)
		}
		v.workloadTemplate(tp, st.Tags[k], st.Keys, true)
	}
	for _, k := range sortedKeys(st.TagValues) {
		if _, ok := st.Tags[k]; !ok {
			v.keyErrf(p+".tag_values."+k, allowedList(sortedKeys(st.Tags)), "tag_values for %q, which is not a tag of the stream", k)
		}
	}
}

// metrics checks a stream's own metrics.
func (v *validator) metrics(p string, ms []StreamMetric) {
	seen := map[string]bool{}
	for i, m := range ms {
		mp := fmt.Sprintf("%s[%d]", p, i)
		switch {
		case !v.ok(mp + ".name"):
		case m.Name == "":
			v.missing(mp+".name", "")
		case !tagNamePattern.MatchString(m.Name):
			v.errf(mp+".name", "lower-case letters, digits and _", "invalid metric name %q", m.Name)
		case builtinMetric(m.Name):
			v.errf(mp+".name", "", "%s is a metric the engine writes", m.Name)
		case seen[m.Name]:
			v.errf(mp+".name", "", "metric %s twice", m.Name)
		}
		seen[m.Name] = true
		if v.ok(mp+".kind") && m.Kind != "rate" && m.Kind != "counter" {
			v.errf(mp+".kind", "rate, counter", "unknown kind %q", m.Kind)
		}
		for j, s := range m.When.Status {
			v.status(fmt.Sprintf("%s.when.status[%d]", mp, j), s)
		}
		v.nonNegative(mp+".when.within", m.When.Within)
		switch {
		case m.When.Header != "" && !headerNamePattern.MatchString(m.When.Header):
			v.errf(mp+".when.header", "an HTTP header name", "invalid header name %q", m.When.Header)
		case m.When.Header == "" && m.When.Value != "":
			v.errf(mp+".when.value", "", "a value without a header")
		}
	}
	if len(ms) > 16 {
		v.errf(p, "at most 16", "%d metrics", len(ms))
	}
}

// builtinMetric reports whether a metric name is one an engine writes.
func builtinMetric(name string) bool {
	return strings.HasPrefix(name, "http_req") || strings.HasPrefix(name, "grpc_req") || strings.HasPrefix(name, "resilience_") ||
		slices.Contains([]string{"checks", "iterations", "dropped_iterations", "iteration_duration", "vus", "vus_max", "data_sent", "data_received"}, name)
}
