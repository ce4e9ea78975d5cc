package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/native"
	"github.com/chaosrun/chaosrun/workloads/nativerun"
)

// NativeConfig says how a run's native load is made.
type NativeConfig struct {
	// Executable is the chaosrun binary: its `load` command runs a shard.
	Executable string
	// Shards runs the workload as this many load processes, each taking
	// every Nth arrival of each stream; their results are merged. 0 or 1:
	// one process.
	Shards int
	// Results says where the results stream is received.
	Results Results
}

// NativeSpecFile is where a native load's spec is written, under the
// run's out dir: `chaosrun load --spec` replays the run's load from it.
const NativeSpecFile = "logs/load-spec.json"

// Native makes a run's load as `chaosrun load` processes running the
// scenario's native workload against the testbed.
func Native(c NativeConfig) NewLoad {
	return func(spec LoadSpec) (Load, error) {
		s, err := NativeSpec(spec)
		if err != nil {
			return nil, err
		}
		path, err := filepath.Abs(filepath.Join(spec.OutDir, NativeSpecFile))
		if err != nil {
			return nil, err
		}
		b, err := json.MarshalIndent(s, "", "  ")
		if err == nil {
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.WriteFile(path, append(b, '\n'), 0o644)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("native load spec: %w", err)
		}
		return NewShardedLoad(&nativeEngine{exe: c.Executable, specFile: path, grace: s.Grace}, c.Shards, spec, c.Results), nil
	}
}

// NativeSpec is the native engine's spec of a run: the scenario's streams
// aimed at the testbed's instances (every replica of a target in turn),
// with the run's seed and load duration. A target outside the blast
// radius is refused before anything starts.
func NativeSpec(spec LoadSpec) (native.Spec, error) {
	addrs := spec.Addresses
	urls := func(svc string) ([]string, error) {
		if len(addrs[svc]) == 0 {
			return nil, fmt.Errorf("no running instance of service %q", svc)
		}
		out := make([]string, len(addrs[svc]))
		for i, a := range addrs[svc] {
			out[i] = "http://" + a
		}
		return out, nil
	}
	s, err := native.FromRun(spec.Scenario, urls, spec.Seed, spec.Duration)
	if err != nil {
		return native.Spec{}, err
	}
	for _, st := range s.Streams {
		for _, t := range st.Targets {
			u, err := url.Parse(t)
			if err != nil || !spec.Allowed.Permits(u.Host) {
				return native.Spec{}, fmt.Errorf("native workload: stream %s: target %s is outside this run's blast radius (allowed: services the testbed starts, loopback, and --allow-target/allow_targets entries)", st.Name, t)
			}
		}
	}
	return s, nil
}

// nativeEngine runs shards as `chaosrun load` processes.
type nativeEngine struct {
	exe, specFile string
	grace         time.Duration
	parts         partLog
}

func (*nativeEngine) Name() string { return "native" }

// Parts are how the shards' processes ran.
func (e *nativeEngine) Parts() []record.LoadPart { return e.parts.list() }

// RunShard runs `chaosrun load` for shard sh.
func (e *nativeEngine) RunShard(ctx context.Context, sh Shard) error {
	g := nativerun.DefaultGrace
	if e.grace > 5*time.Second {
		g += e.grace - 5*time.Second
	}
	return nativerun.Run(ctx, nativerun.Spec{Binary: e.exe, SpecFile: e.specFile, Shard: native.Shard{Index: sh.Index, Count: sh.Count},
		StreamAddr: sh.StreamAddr, StreamOptions: sh.StreamOptions, StreamToken: sh.StreamToken, LogPath: sh.LogPath, Grace: g,
		Started: func(pid int) { e.parts.started(sh, pid) },
		Exited: func(code int, ran time.Duration) {
			e.parts.update(sh, func(p *record.LoadPart) { p.ExitCode, p.Ran = code, record.Duration(ran) })
		}})
}
