package native

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/models/client"
	"github.com/chaosrun/chaosrun/models/keys"
)

// Spec is a native workload, ready to run: its streams with their targets
// resolved to base URLs. It is plain data (JSON), so that a harness can hand
// it to a `chaosrun load` process or a Kubernetes Pod.
type Spec struct {
	// Seed makes every random choice replayable: keys, jitter.
	Seed    uint64   `json:"seed"`
	Streams []Stream `json:"streams"`
	// Grace is how long requests in flight when the schedule ends may
	// finish; default 5 s (k6's gracefulStop in the catalog's scripts).
	Grace time.Duration `json:"grace,omitempty"`
	// Connections bounds the connections to one host: a request beyond it
	// waits in the client for one (the wait counts in its latency). It
	// keeps a hiccup from turning into a storm of new connections at high
	// rates. Default: 50 ms of the streams' peak rates, at least 256 and
	// at most their workers.
	Connections int `json:"connections,omitempty"`
}

// Stream is one named request stream: what to send, to where, on which
// schedule, with which keys and client model.
type Stream struct {
	// Name is the stream's name, its series' scenario tag.
	Name string `json:"name"`
	// Targets are base URLs (scheme://host:port[/prefix]); arrival i goes
	// to Targets[i mod len].
	Targets []string `json:"targets"`
	Method  string   `json:"method"`
	// Path, Body and Headers' values are templates: {KEY} is a key of
	// Keys, {seq} the arrival's index, {seed} the spec's seed.
	Path    string            `json:"path"`
	Body    string            `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Timeout time.Duration     `json:"timeout"`
	// Tags are added to every series of the stream; a value may hold
	// {KEY.class} (hot, cold, bot) or {KEY.shard}. TagValues maps a
	// rendered value of a tag to another ("*" matches any other).
	Tags      map[string]string            `json:"tags,omitempty"`
	TagValues map[string]map[string]string `json:"tag_values,omitempty"`
	Arrival   arrival.Profile              `json:"arrival"`
	Keys      map[string]Keys              `json:"keys,omitempty"`
	// Client is the client model; nil sends each arrival once.
	Client *Client `json:"client,omitempty"`
	// Expect lists the statuses a check passes on (k6's checks metric);
	// empty: no checks.
	Expect  []int    `json:"expect,omitempty"`
	Metrics []Metric `json:"metrics,omitempty"`
	// Workers bounds requests in flight; an arrival that finds every
	// worker busy is dropped (dropped_iterations). Default: the peak rate
	// times the timeout (at most 4 s of it), within 20..5000.
	Workers int `json:"workers,omitempty"`
	// GRPC, when set, makes each request a unary gRPC call (grpc.go):
	// Method and Path are unused, Body is the request as JSON and Expect
	// lists gRPC codes.
	GRPC *GRPC `json:"grpc,omitempty"`
}

// Keys is one key stream of a Stream and how its keys are written.
type Keys struct {
	keys.Config
	// Prefix and Width write key index k as Prefix + k zero-padded to
	// Width digits; Text, when set, is the bot stream's key as written.
	Prefix string `json:"prefix,omitempty"`
	Width  int    `json:"width,omitempty"`
	Text   string `json:"text,omitempty"`
	// Shards, when set, gives each key a shard: FNV-1a 32 of its text mod
	// Shards ({KEY.shard}). Only, when set, keeps the keys on those shards.
	Shards int   `json:"shards,omitempty"`
	Only   []int `json:"only,omitempty"`
}

// Client is a stream's client model and the headers it sets.
type Client struct {
	client.Config
	// Tier, when set, is sent in the criticality header.
	Tier    string             `json:"tier,omitempty"`
	Headers client.HeaderNames `json:"headers"`
}

// Metric is a custom metric of a stream, one sample per logical request:
// a rate (1 when When holds, else 0) or a counter (adds 1 or 0).
type Metric struct {
	Name string    `json:"name"`
	Kind string    `json:"kind"` // rate or counter
	When Condition `json:"when"`
}

// Condition is what a logical request's last answer must meet; empty
// fields always hold.
type Condition struct {
	Status []int `json:"status,omitempty"`
	// Within bounds the request's duration from its intended start.
	Within time.Duration `json:"within,omitempty"`
	// Header must have Value in the answer.
	Header string `json:"header,omitempty"`
	Value  string `json:"value,omitempty"`
}

// Shard says which share of every stream's arrivals a process takes:
// arrivals Index, Index+Count, Index+2·Count, … (like k6 execution
// segments), so Count shards together send what one engine would.
type Shard struct {
	Index, Count int
}

// Limits of a spec.
const (
	maxStreams    = 256
	maxWorkers    = 100_000
	maxMetrics    = 16
	maxTagVariant = 4096
)

// Validate reports the first problem of the spec.
func (s *Spec) Validate() error {
	if len(s.Streams) == 0 || len(s.Streams) > maxStreams {
		return fmt.Errorf("native workload: %d streams: want 1..%d", len(s.Streams), maxStreams)
	}
	seen := map[string]bool{}
	for i := range s.Streams {
		st := &s.Streams[i]
		if seen[st.Name] {
			return fmt.Errorf("native workload: stream %q twice", st.Name)
		}
		seen[st.Name] = true
		if err := st.validate(); err != nil {
			return fmt.Errorf("native workload: stream %q: %w", st.Name, err)
		}
	}
	if s.Grace < 0 || s.Connections < 0 {
		return fmt.Errorf("native workload: grace %s, connections %d: want neither negative", s.Grace, s.Connections)
	}
	return nil
}

func (st *Stream) validate() error {
	switch {
	case st.Name == "":
		return fmt.Errorf("no name")
	case len(st.Targets) == 0:
		return fmt.Errorf("no target URL")
	case st.GRPC == nil && !validMethod(st.Method):
		return fmt.Errorf("method %q is not an HTTP method", st.Method)
	case st.GRPC == nil && !strings.HasPrefix(st.Path, "/"):
		return fmt.Errorf("path %q: want one starting with /", st.Path)
	case st.Timeout <= 0:
		return fmt.Errorf("timeout %s: want a positive one", st.Timeout)
	case st.Workers < 0 || st.Workers > maxWorkers:
		return fmt.Errorf("workers %d: allowed 0..%d", st.Workers, maxWorkers)
	case len(st.Metrics) > maxMetrics:
		return fmt.Errorf("%d metrics: at most %d", len(st.Metrics), maxMetrics)
	}
	if st.GRPC != nil {
		if err := st.GRPC.validate(st); err != nil {
			return err
		}
	}
	for _, t := range st.Targets {
		u, err := url.Parse(t)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
			return fmt.Errorf("target %q: want http(s)://HOST:PORT[/PATH]", t)
		}
	}
	if err := st.Arrival.Validate(); err != nil {
		return err
	}
	for name, k := range st.Keys {
		if err := k.Config.Validate(); err != nil {
			return fmt.Errorf("keys %s: %w", name, err)
		}
		if k.Width < 0 || k.Width > 20 || k.Shards < 0 || (len(k.Only) > 0 && k.Shards == 0) {
			return fmt.Errorf("keys %s: width %d, shards %d, only %v: want width 0..20, shards ≥ 0 and only with shards", name, k.Width, k.Shards, k.Only)
		}
	}
	if st.Client != nil {
		if err := st.Client.Config.Validate(); err != nil {
			return err
		}
	}
	for _, m := range st.Metrics {
		if m.Name == "" || (m.Kind != "rate" && m.Kind != "counter") {
			return fmt.Errorf("metric %q of kind %q: want a name and kind rate or counter", m.Name, m.Kind)
		}
	}
	return nil
}

func validMethod(m string) bool {
	return slices.Contains([]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions}, m)
}

// connections is the per-host connection bound of one of n shards.
func (s *Spec) connections(n int) int {
	if s.Connections > 0 {
		return s.Connections
	}
	var peak float64
	workers := 0
	for i := range s.Streams {
		peak += s.Streams[i].Arrival.Peak() / float64(n)
		workers += s.Streams[i].workers(n)
	}
	return min(max(int(peak*0.05), 256), workers)
}

// workers is the stream's worker count for one of n shards.
func (st *Stream) workers(n int) int {
	w := st.Workers
	if w == 0 {
		span := min(st.Timeout, 4*time.Second).Seconds()
		w = min(max(int(st.Arrival.Peak()*span+0.999), 20), 5000)
	}
	return max((w+n-1)/n, 1)
}
