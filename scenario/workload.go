package scenario

import (
	"slices"
	"time"

	"github.com/chaosrun/chaosrun/models/keys"
)

// Engines a workload runs on.
const (
	EngineNative = "native"
	EngineK6     = "k6"
)

// Stream is one named request stream of a native workload: what to send,
// to which service, on which schedule, with which keys and client.
type Stream struct {
	// Target is the service the stream sends to; arrivals go to each of
	// its replicas in turn.
	Target string `yaml:"target" json:"target"`
	// Method is the HTTP method; default GET.
	Method string `yaml:"method,omitempty" json:"method,omitempty" jsonschema:"enum=GET,enum=HEAD,enum=POST,enum=PUT,enum=PATCH,enum=DELETE,enum=OPTIONS"`
	// Path is the request's path and query, a template: {NAME} is a key
	// of keys, {seq} the arrival's number in the stream, {seed} the run's
	// seed; {{ writes {.
	Path string `yaml:"path,omitempty" json:"path,omitempty" jsonschema:"pattern=^/"`
	// Body is the request body, a template like path.
	Body string `yaml:"body,omitempty" json:"body,omitempty"`
	// Headers are request headers; their values are templates like path.
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	// Timeout bounds each request; default 10s.
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Tags are added to every series of the stream (api, name, caller,
	// tier, key_class, …); a value may read {NAME.class} (hot, cold, bot)
	// or {NAME.shard} of a key. name defaults to the path as written.
	Tags map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
	// TagValues maps a tag's rendered value to another, "*" any other:
	// key_class: {"0": faulty-shard, "*": other}.
	TagValues map[string]map[string]string `yaml:"tag_values,omitempty" json:"tag_values,omitempty"`
	// Arrival is the stream's open-model schedule.
	Arrival Arrival `yaml:"arrival" json:"arrival"`
	// Keys are the stream's key streams, by the name templates use.
	Keys map[string]*KeyStream `yaml:"keys,omitempty" json:"keys,omitempty"`
	// Client is how the caller behaves: retries, backoff, budget, back
	// pressure, breaker, deadline; none sends each arrival once.
	Client *Client `yaml:"client,omitempty" json:"client,omitempty"`
	// Expect lists the statuses a request's check passes on (k6's checks
	// metric); none: no checks.
	Expect []int `yaml:"expect,omitempty" json:"expect,omitempty"`
	// Metrics are the stream's own metrics, one sample per request.
	Metrics []StreamMetric `yaml:"metrics,omitempty" json:"metrics,omitempty"`
	// GRPC, when set, makes the stream's requests unary gRPC calls
	// (then it has no method, path or headers).
	GRPC *GRPC `yaml:"grpc,omitempty" json:"grpc,omitempty"`
	// Workers bounds the requests in flight; an arrival that finds none
	// free is dropped (dropped_iterations). Default: the peak rate times
	// the timeout (at most 4s of it), within 20..5000.
	Workers int `yaml:"workers,omitempty" json:"workers,omitempty" jsonschema:"minimum=1,maximum=100000"`
}

// Arrival is a stream's schedule: exactly one of rate, stages, bursts or
// step. Arrivals never wait for answers.
type Arrival struct {
	// Rate is a constant rate in requests per second (0 turns the stream
	// off); with start and duration it is a window (a flood).
	Rate *float64 `yaml:"rate,omitempty" json:"rate,omitempty" jsonschema:"minimum=0"`
	// Start is when the stream's arrivals begin, from the start of load.
	Start Duration `yaml:"start,omitempty" json:"start,omitempty"`
	// Duration is how long rate or bursts last; default to the end of load.
	Duration Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// StartRate is the rate the first stage starts from.
	StartRate float64 `yaml:"start_rate,omitempty" json:"start_rate,omitempty" jsonschema:"minimum=0"`
	// Stages ramp the rate: each moves it linearly to its target over its
	// duration (k6's ramping-arrival-rate).
	Stages []Stage `yaml:"stages,omitempty" json:"stages,omitempty"`
	// Bursts is a base rate with a burst to peak every period.
	Bursts *Bursts `yaml:"bursts,omitempty" json:"bursts,omitempty"`
	// Step is an overload step: baseline, then factor × capacity, then
	// baseline again.
	Step *Step `yaml:"step,omitempty" json:"step,omitempty"`
}

// Stage is one ramp of an arrival: to Target requests per second over
// Duration.
type Stage struct {
	Target   float64  `yaml:"target" json:"target" jsonschema:"minimum=0"`
	Duration Duration `yaml:"duration" json:"duration"`
}

// Bursts is a base rate with periodic bursts: every Every, the rate rises
// to Peak over Rise (default 1s), holds for the rest of Length, then falls
// back over Rise.
type Bursts struct {
	Base   int      `yaml:"base,omitempty" json:"base,omitempty" jsonschema:"minimum=0"`
	Peak   int      `yaml:"peak" json:"peak" jsonschema:"minimum=0"`
	Every  Duration `yaml:"every" json:"every"`
	Length Duration `yaml:"length" json:"length"`
	Rise   Duration `yaml:"rise,omitempty" json:"rise,omitempty"`
}

// Step runs at Baseline × Capacity for Before, rises over Rise (default
// 1s) to Factor × Capacity and holds it for Hold, then returns to the
// baseline for After.
type Step struct {
	Capacity int `yaml:"capacity" json:"capacity" jsonschema:"minimum=1"`
	// Factor is the overload as a multiple of capacity; default 2.
	Factor float64 `yaml:"factor,omitempty" json:"factor,omitempty"`
	// Baseline is the rate before and after, as a share of capacity;
	// default 0.5.
	Baseline *float64 `yaml:"baseline,omitempty" json:"baseline,omitempty" jsonschema:"minimum=0"`
	Before   Duration `yaml:"before,omitempty" json:"before,omitempty"`
	Rise     Duration `yaml:"rise,omitempty" json:"rise,omitempty"`
	Hold     Duration `yaml:"hold" json:"hold"`
	After    Duration `yaml:"after,omitempty" json:"after,omitempty"`
}

// KeyStream draws the keys of a stream's requests, replayably from the
// run's seed.
type KeyStream struct {
	// Kind is uniform, zipf, hotset or bot (one key, always).
	Kind string `yaml:"kind" json:"kind" jsonschema:"enum=uniform,enum=zipf,enum=hotset,enum=bot"`
	// N is how many keys there are (indices 0..n-1); default 1000.
	N int `yaml:"n,omitempty" json:"n,omitempty" jsonschema:"minimum=1"`
	// S is the Zipf exponent; default 1.1.
	S float64 `yaml:"s,omitempty" json:"s,omitempty"`
	// Hot is the hot set's size (hotset; with uniform and zipf, the keys
	// below it are of class hot); default n/100 for hotset.
	Hot int `yaml:"hot,omitempty" json:"hot,omitempty" jsonschema:"minimum=0"`
	// P is the share of draws that go to the hot set; default 0.9.
	P *float64 `yaml:"p,omitempty" json:"p,omitempty" jsonschema:"minimum=0,maximum=1"`
	// Key is the bot stream's key as written; default prefix + "0".
	Key string `yaml:"key,omitempty" json:"key,omitempty"`
	// Prefix and Width write key k as prefix + k, zero-padded to width
	// digits.
	Prefix string `yaml:"prefix,omitempty" json:"prefix,omitempty"`
	Width  int    `yaml:"width,omitempty" json:"width,omitempty" jsonschema:"minimum=0,maximum=20"`
	// Shards gives each key a shard, FNV-1a 32 of its text mod shards
	// (the key-value dispatcher's routing), for {NAME.shard}.
	Shards int `yaml:"shards,omitempty" json:"shards,omitempty" jsonschema:"minimum=0"`
	// Only keeps the keys on these shards.
	Only []int `yaml:"only,omitempty" json:"only,omitempty"`
}

// Client is a stream's client model (the xk6-resilience models).
type Client struct {
	// Model is naive (no pause between retries), backoff (full jitter),
	// budgeted (backoff within a retry budget) or smart (budgeted, never
	// retries back pressure, with a breaker).
	Model string `yaml:"model" json:"model" jsonschema:"enum=naive,enum=backoff,enum=budgeted,enum=smart"`
	// Retries is the most retries of one request; default 3.
	Retries *int `yaml:"retries,omitempty" json:"retries,omitempty" jsonschema:"minimum=0,maximum=100"`
	// Base and Cap bound the backoff: retry n waits uniform [0,
	// min(cap, base·2ⁿ)); default 50ms and 2s.
	Base Duration `yaml:"base,omitempty" json:"base,omitempty"`
	Cap  Duration `yaml:"cap,omitempty" json:"cap,omitempty"`
	// Budget caps retries/requests over budget_window (budgeted,
	// smart); default 0.1 over 10s.
	Budget       *float64 `yaml:"budget,omitempty" json:"budget,omitempty" jsonschema:"minimum=0,maximum=100"`
	BudgetWindow Duration `yaml:"budget_window,omitempty" json:"budget_window,omitempty"`
	// Deadline bounds a request, retries and pauses included, and is sent
	// as the milliseconds left in the deadline header; none by default.
	Deadline Duration `yaml:"deadline,omitempty" json:"deadline,omitempty"`
	// RetryOn lists the statuses worth retrying (no answer always is);
	// default 429, 500, 502, 503, 504.
	RetryOn []int `yaml:"retry_on,omitempty" json:"retry_on,omitempty"`
	// Backpressure says which answers shed load.
	Backpressure *Backpressure `yaml:"backpressure,omitempty" json:"backpressure,omitempty"`
	// Breaker is the smart client's circuit breaker.
	Breaker *Breaker `yaml:"breaker,omitempty" json:"breaker,omitempty"`
	// Tier is sent in the criticality header (e.g. critical, sheddable).
	Tier string `yaml:"tier,omitempty" json:"tier,omitempty"`
	// DeadlineHeader and CriticalityHeader name those headers; default
	// X-Deadline-Ms and X-Criticality.
	DeadlineHeader    string `yaml:"deadline_header,omitempty" json:"deadline_header,omitempty"`
	CriticalityHeader string `yaml:"criticality_header,omitempty" json:"criticality_header,omitempty"`
}

// Backpressure classifies back-pressure answers: a status of Statuses
// (default 429, 503) with Header: Value (default X-Backpressure: 1), or
// with a Retry-After header when RetryAfter (default true).
type Backpressure struct {
	Statuses   []int  `yaml:"statuses,omitempty" json:"statuses,omitempty"`
	Header     string `yaml:"header,omitempty" json:"header,omitempty"`
	Value      string `yaml:"value,omitempty" json:"value,omitempty"`
	RetryAfter *bool  `yaml:"retry_after,omitempty" json:"retry_after,omitempty"`
}

// Breaker opens after Failures consecutive failures (default 5) for
// Cooldown (default 5s, or the answer's Retry-After when longer).
type Breaker struct {
	Failures int      `yaml:"failures,omitempty" json:"failures,omitempty" jsonschema:"minimum=1"`
	Cooldown Duration `yaml:"cooldown,omitempty" json:"cooldown,omitempty"`
}

// StreamMetric is a metric of a stream's own, one sample per request: a
// rate (1 when when holds, else 0) or a counter (adds 1 or 0).
type StreamMetric struct {
	Name string    `yaml:"name" json:"name" jsonschema:"pattern=^[a-z_][a-z0-9_]*$"`
	Kind string    `yaml:"kind" json:"kind" jsonschema:"enum=rate,enum=counter"`
	When Condition `yaml:"when,omitempty" json:"when,omitempty"`
}

// Condition is what a request's last answer must meet; fields left out
// always hold.
type Condition struct {
	// Status lists the statuses that count.
	Status []int `yaml:"status,omitempty" json:"status,omitempty"`
	// Within bounds the request's duration, from when it was due.
	Within Duration `yaml:"within,omitempty" json:"within,omitempty"`
	// Header must have Value in the answer.
	Header string `yaml:"header,omitempty" json:"header,omitempty"`
	Value  string `yaml:"value,omitempty" json:"value,omitempty"`
}

// DefaultTimeout is a stream's request timeout when it sets none.
const DefaultTimeout = 10 * time.Second

// applyDefaults fills the engine, a native workload's targets (its
// streams', in order) and its streams' defaults.
func (w *Workload) applyDefaults() {
	w.Engine = w.EngineName()
	if EngineShape(w.Engine) != ShapeStreams {
		return
	}
	names := w.streamNames()
	w.StreamOrder = names
	fill := len(w.Targets) == 0
	for _, name := range names {
		st := w.Streams[name]
		if fill && !slices.Contains(w.Targets, st.Target) {
			w.Targets = append(w.Targets, st.Target)
		}
		if st.Method == "" && st.GRPC == nil {
			st.Method = "GET"
		}
		if st.Timeout == 0 {
			st.Timeout = Duration(DefaultTimeout)
		}
		for _, k := range st.Keys {
			k.applyDefaults()
		}
	}
}

// applyDefaults fills a key stream's defaults, as the k6 extension's
// JavaScript API has them.
func (k *KeyStream) applyDefaults() {
	if k.Kind == keys.Bot {
		return
	}
	if k.N == 0 {
		k.N = 1000
	}
	if k.Kind == keys.Zipf && k.S == 0 {
		k.S = 1.1
	}
	if k.Kind == keys.Hotset && k.Hot == 0 {
		k.Hot = max(k.N/100, 1)
	}
	if (k.Kind == keys.Hotset) && k.P == nil {
		p := 0.9
		k.P = &p
	}
}
