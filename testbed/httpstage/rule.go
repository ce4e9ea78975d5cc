package httpstage

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kinds of HTTP toxics.
const (
	KindError   = "http_error"
	KindLatency = "http_latency"
)

// Kinds are every toxic type the stage serves: HTTP/1.1 requests' and
// gRPC calls'.
var Kinds = []string{KindError, KindLatency, KindGRPCError, KindGRPCLatency, KindGRPCReset}

// MaxLatency bounds a delay: one hour, as for Toxiproxy's latency toxic.
const MaxLatency = time.Hour

// Toxic is an HTTP toxic as the API reads and writes it, in the shape of a
// Toxiproxy toxic: toxicity is the fraction of matched requests affected.
type Toxic struct {
	Name       string     `json:"name"`
	Type       string     `json:"type"`
	Stream     string     `json:"stream,omitempty"`
	Toxicity   *float64   `json:"toxicity,omitempty"`
	Attributes Attributes `json:"attributes"`
	// Stats and Seed are filled by the stage in its answers.
	Stats *Stats `json:"stats,omitempty"`
	Seed  int64  `json:"seed,omitempty"`
}

// Attributes configure an HTTP toxic: what it answers or how long it
// delays, and which requests it matches (every condition must hold).
type Attributes struct {
	// Status is the answer of http_error (default 503); RetryAfter, in
	// seconds, adds a Retry-After field when > 0.
	Status     int `json:"status,omitempty"`
	RetryAfter int `json:"retry_after,omitempty"`
	// Latency is the delay of http_latency in ms: fixed; uniform in
	// latency±jitter when Jitter > 0; lognormal with median Latency and 99th
	// percentile P99 when P99 > 0.
	Latency int64 `json:"latency,omitempty"`
	Jitter  int64 `json:"jitter,omitempty"`
	P99     int64 `json:"p99,omitempty"`
	// Method matches the request method (case-insensitive).
	Method string `json:"method,omitempty"`
	// Path is a glob over the request path without its query: * is any run
	// of bytes (slashes too), ? one byte.
	Path string `json:"path,omitempty"`
	// PathRegex is an RE2 expression the path must contain a match of.
	PathRegex string `json:"path_regex,omitempty"`
	// Header maps field names to globs their value must match.
	Header map[string]string `json:"header,omitempty"`
	// Seed seeds the toxic's random choices; 0 derives one from the
	// stage's seed and the toxic's name.
	Seed int64 `json:"seed,omitempty"`
	// Code is the gRPC status grpc_error answers (1..16, default 14,
	// UNAVAILABLE); PushbackMS, when > 0, adds grpc-retry-pushback-ms.
	Code       int   `json:"code,omitempty"`
	PushbackMS int64 `json:"pushback_ms,omitempty"`
	// GoAway makes grpc_reset end the whole connection with GOAWAY
	// instead of resetting the call's stream (RST_STREAM).
	GoAway int `json:"goaway,omitempty"`
	// Response makes grpc_latency hold the call's response headers, once
	// the server has answered, instead of the call before it is forwarded.
	Response int `json:"response,omitempty"`
}

// Stats count what a toxic saw while in force.
type Stats struct {
	// Seen is every request the stage parsed; Matched those the matchers
	// selected; Affected those the toxicity roll picked (answered or
	// delayed).
	Seen     int64 `json:"seen"`
	Matched  int64 `json:"matched"`
	Affected int64 `json:"affected"`
}

// rule is a toxic in force on a stage.
type rule struct {
	toxic    Toxic // as added, with Seed resolved
	toxicity float64
	re       *regexp.Regexp
	grpc     bool    // a gRPC kind: acts on gRPC calls over HTTP/2 only
	sigma    float64 // lognormal shape
	answer   []byte  // http_error: the response, without Connection
	headLen  int     // http_error: bytes of answer before the body

	seen, matched, affected atomic.Int64

	mu  sync.Mutex
	rng *rand.Rand
}

// newRule checks a toxic and readies it; seed is used when the toxic has
// none.
func newRule(t Toxic, seed int64) (*rule, error) {
	if t.Name == "" {
		return nil, fmt.Errorf("toxic has no name")
	}
	r := &rule{toxic: t, toxicity: 1, grpc: isGRPCKind(t.Type)}
	if t.Toxicity != nil {
		if v := *t.Toxicity; math.IsNaN(v) || v < 0 || v > 1 {
			return nil, fmt.Errorf("toxic %s: toxicity %v out of range (allowed: 0..1)", t.Name, v)
		}
		r.toxicity = *t.Toxicity
	}
	a := &r.toxic.Attributes
	switch t.Type {
	case KindError:
		if a.Status == 0 {
			a.Status = http.StatusServiceUnavailable
		}
		if a.Status < 100 || a.Status > 599 || a.Status/100 == 1 {
			return nil, fmt.Errorf("toxic %s: status %d (allowed: 200..599)", t.Name, a.Status)
		}
		if a.RetryAfter < 0 || a.RetryAfter > 86400 {
			return nil, fmt.Errorf("toxic %s: retry_after %d s (allowed: 0..86400)", t.Name, a.RetryAfter)
		}
		r.answer, r.headLen = errorAnswer(t.Name, a.Status, a.RetryAfter)
	case KindGRPCError, KindGRPCReset:
		if err := checkGRPC(t.Name, a); err != nil {
			return nil, err
		}
	case KindLatency, KindGRPCLatency:
		maxMS := MaxLatency.Milliseconds()
		for _, v := range []struct {
			name string
			v    int64
		}{{"latency", a.Latency}, {"jitter", a.Jitter}, {"p99", a.P99}} {
			if v.v < 0 || v.v > maxMS {
				return nil, fmt.Errorf("toxic %s: %s %d ms out of range (allowed: 0..%d)", t.Name, v.name, v.v, maxMS)
			}
		}
		switch {
		case a.Jitter > 0 && a.P99 > 0:
			return nil, fmt.Errorf("toxic %s: jitter (uniform) and p99 (lognormal) exclude each other", t.Name)
		case a.P99 > 0 && a.P99 <= a.Latency:
			return nil, fmt.Errorf("toxic %s: p99 %d ms must exceed the median latency %d ms", t.Name, a.P99, a.Latency)
		case a.P99 > 0 && a.Latency == 0:
			return nil, fmt.Errorf("toxic %s: a lognormal delay needs latency (its median) > 0", t.Name)
		case a.P99 > 0:
			r.sigma = math.Log(float64(a.P99)/float64(a.Latency)) / 2.3263478740408408 // z of p99
		}
	default:
		return nil, fmt.Errorf("toxic %s: unknown type %q (allowed: %s)", t.Name, t.Type, strings.Join(Kinds, ", "))
	}
	if a.Method != "" && !isToken([]byte(a.Method)) {
		return nil, fmt.Errorf("toxic %s: method %q is not an HTTP method token", t.Name, a.Method)
	}
	if a.PathRegex != "" {
		re, err := regexp.Compile(a.PathRegex)
		if err != nil {
			return nil, fmt.Errorf("toxic %s: path_regex: %w", t.Name, err)
		}
		r.re = re
	}
	for name := range a.Header {
		if !isToken([]byte(name)) {
			return nil, fmt.Errorf("toxic %s: header %q is not a field name", t.Name, name)
		}
	}
	if a.Seed == 0 {
		a.Seed = seed
	}
	r.toxic.Seed = a.Seed
	r.rng = rand.New(rand.NewPCG(uint64(a.Seed), uint64(a.Seed)>>1^0x9e3779b97f4a7c15))
	return r, nil
}

// errorAnswer builds the response of an http_error toxic.
func errorAnswer(name string, status, retryAfter int) ([]byte, int) {
	text := http.StatusText(status)
	if text == "" {
		text = "Status " + fmt.Sprint(status)
	}
	body := fmt.Sprintf("%d %s (injected by chaosrun http_error %s)\n", status, text, name)
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nX-Chaosrun-Fault: %s\r\n",
		status, text, len(body), strings.Map(func(r rune) rune {
			if r < ' ' || r >= 0x7f {
				return '_'
			}
			return r
		}, name))
	if retryAfter > 0 {
		fmt.Fprintf(&b, "Retry-After: %d\r\n", retryAfter)
	}
	n := b.Len()
	b.WriteString(body)
	return b.Bytes(), n
}

// matches reports whether the request head h is one the rule selects.
func (r *rule) matches(h *head) bool {
	a := &r.toxic.Attributes
	if a.Method != "" && !bytes.EqualFold(h.method, []byte(a.Method)) {
		return false
	}
	if a.Path != "" || r.re != nil {
		p := h.path()
		if a.Path != "" && !globMatch(a.Path, p) {
			return false
		}
		if r.re != nil && !r.re.Match(p) {
			return false
		}
	}
	for name, pattern := range a.Header {
		found := false
		for _, f := range h.fields {
			if bytes.EqualFold(f.name, []byte(name)) && globMatch(pattern, f.value) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// decide counts request h and says whether the rule affects it, and with
// what delay (http_latency).
func (r *rule) decide(h *head) (hit bool, delay time.Duration) {
	return r.roll(r.matches(h))
}

// roll counts a request the rule saw (matched or not) and, for a matched
// one, draws whether the toxicity picks it and its delay.
func (r *rule) roll(matched bool) (hit bool, delay time.Duration) {
	r.seen.Add(1)
	if !matched {
		return false, 0
	}
	r.matched.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.toxicity < 1 && r.rng.Float64() >= r.toxicity {
		return false, 0
	}
	r.affected.Add(1)
	if r.toxic.Type == KindLatency || r.toxic.Type == KindGRPCLatency {
		delay = r.delayLocked()
	}
	return true, delay
}

// delayLocked draws one delay from the rule's distribution.
func (r *rule) delayLocked() time.Duration {
	a := &r.toxic.Attributes
	ms := float64(a.Latency)
	switch {
	case a.Jitter > 0:
		ms += (r.rng.Float64()*2 - 1) * float64(a.Jitter)
	case a.P99 > 0:
		ms *= math.Exp(r.sigma * r.rng.NormFloat64())
	}
	d := time.Duration(ms * float64(time.Millisecond))
	return min(max(d, 0), MaxLatency)
}

// snapshot is the toxic with its current stats.
func (r *rule) snapshot() Toxic {
	t := r.toxic
	t.Toxicity = &r.toxicity
	t.Stats = &Stats{Seen: r.seen.Load(), Matched: r.matched.Load(), Affected: r.affected.Load()}
	return t
}

// globMatch matches s against a glob where * is any run of bytes and ? one
// byte; every other byte stands for itself.
func globMatch(pattern string, s []byte) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
