package native

import (
	"fmt"
	"maps"
	"path/filepath"
	"time"

	"github.com/chaosrun/chaosrun/models/rng"
	"github.com/chaosrun/chaosrun/scenario"
)

// FromScenario builds the spec of a scenario's native workload (validated,
// so with its defaults filled); urls gives a service's base URLs, one per
// replica, as load reaches them. Every key stream is seeded from the
// scenario's seed and its stream's and its own name.
func FromScenario(sc *scenario.Scenario, urls func(service string) ([]string, error)) (Spec, error) {
	return FromRun(sc, urls, sc.Seed, sc.Workload.Duration.Std())
}

// FromRun is FromScenario for a run with a seed and a load duration of its
// own (--seed; a game day's load runs until stopped).
func FromRun(sc *scenario.Scenario, urls func(service string) ([]string, error), runSeed int64, load time.Duration) (Spec, error) {
	w := &sc.Workload
	if w.EngineName() != scenario.EngineNative {
		return Spec{}, fmt.Errorf("native workload: %s runs on engine %s", sc.Name, w.EngineName())
	}
	seed := uint64(runSeed)
	spec := Spec{Seed: seed, Connections: w.Connections}
	for _, name := range w.StreamOrder {
		st := w.Streams[name]
		targets, err := urls(st.Target)
		if err != nil {
			return Spec{}, fmt.Errorf("native workload: stream %s: target %s: %w", name, st.Target, err)
		}
		prof, err := st.Arrival.Profile(load)
		if err != nil {
			return Spec{}, fmt.Errorf("native workload: stream %s: %w", name, err)
		}
		out := Stream{Name: name, Targets: targets, Method: st.Method, Path: st.Path, Body: st.Body,
			Headers: maps.Clone(st.Headers), Timeout: st.Timeout.Std(), Tags: maps.Clone(st.Tags),
			TagValues: st.TagValues, Arrival: prof, Expect: st.Expect, Workers: st.Workers}
		if len(st.Keys) > 0 {
			out.Keys = map[string]Keys{}
		}
		for k, ks := range st.Keys {
			out.Keys[k] = Keys{Config: ks.Config(rng.Mix(seed, nameHash(name+"/"+k))), Prefix: ks.Prefix, Width: ks.Width,
				Text: ks.Key, Shards: ks.Shards, Only: ks.Only}
		}
		if st.GRPC != nil {
			if out.GRPC, out.Expect, err = grpcFromScenario(filepath.Dir(sc.File), st); err != nil {
				return Spec{}, fmt.Errorf("native workload: stream %s: %w", name, err)
			}
		}
		if c := st.Client; c != nil {
			out.Client = &Client{Config: c.Config(), Tier: c.Tier, Headers: c.HeaderNames()}
		}
		for _, m := range st.Metrics {
			out.Metrics = append(out.Metrics, Metric{Name: m.Name, Kind: m.Kind,
				When: Condition{Status: m.When.Status, Within: m.When.Within.Std(), Header: m.When.Header, Value: m.When.Value}})
		}
		spec.Streams = append(spec.Streams, out)
	}
	return spec, spec.Validate()
}

// nameHash is FNV-1a 64 of a name.
func nameHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
