package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/native"
)

// Engine is a load engine as it registers: how to make a run's load, what
// it needs before, how the export runs it and what the record names.
type Engine struct {
	// New makes the load of one run from the settings o.
	New func(o Options) NewLoad
	// Check checks a scenario for the engine beyond the model (its script
	// exists); scripts gives the folder of the bundled scripts. Nil checks
	// nothing.
	Check func(sc *scenario.Scenario, path string, scripts func() (string, error)) error
	// Tool names the program the engine runs, built or found before any
	// run ("k6"); "" when the engine is chaosrun's own.
	Tool string
	// K8sJob says the Kubernetes export runs the load as an Indexed Job of
	// `chaosrun load` shards; otherwise as a k6-operator TestRun.
	K8sJob bool
	// Version names what ran the load for the record's versions, given
	// the tool's version ("" without one).
	Version func(toolVersion string) map[string]string
	// Shape is how a workload on the engine is written, what validation
	// checks of it; 0 is scenario.ShapeOwn (the engine's Check alone).
	Shape scenario.Shape
}

// Options are what a run's load is made with.
type Options struct {
	// Executable is the chaosrun binary (its `load` command runs a shard).
	Executable string
	// Tool is the path of the engine's Tool, when it has one.
	Tool string
	// ScriptDir is where workload scripts named in scenarios live.
	ScriptDir string
	// Shards runs the workload as this many processes; 0 or 1: one.
	Shards int
	// Results says where the results stream is received.
	Results Results
}

var (
	mu      sync.RWMutex
	engines = map[string]Engine{}
)

// Register makes an engine known by name, the name a scenario's
// workload.engine gives. It panics on a second engine of one name or one
// without New (a programming error, found when the binary starts).
func Register(name string, e Engine) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := engines[name]; dup || e.New == nil || name == "" {
		panic(fmt.Sprintf("engine.Register(%q): registered twice, unnamed or without New", name))
	}
	if e.Shape == 0 {
		e.Shape = scenario.ShapeOwn
	}
	scenario.RegisterEngine(name, e.Shape)
	engines[name] = e
}

// Lookup is the engine called name.
func Lookup(name string) (Engine, error) {
	mu.RLock()
	defer mu.RUnlock()
	e, ok := engines[name]
	if !ok {
		return Engine{}, fmt.Errorf("unknown load engine %q (known: %s)", name, strings.Join(namesLocked(), ", "))
	}
	return e, nil
}

// Of is the engine sc's workload runs on.
func Of(sc *scenario.Scenario) (Engine, error) { return Lookup(sc.Workload.EngineName()) }

// Names lists the registered engines, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	out := make([]string, 0, len(engines))
	for n := range engines {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// NeedsTool reports whether any of the scenarios runs on an engine that
// needs tool.
func NeedsTool(scs []*scenario.Scenario, tool string) bool {
	return slices.ContainsFunc(scs, func(sc *scenario.Scenario) bool {
		e, err := Of(sc)
		return err == nil && e.Tool == tool
	})
}

func init() {
	Register(scenario.EngineK6, Engine{
		New: func(o Options) NewLoad {
			return K6(K6Config{Binary: o.Tool, ScriptDir: o.ScriptDir, Shards: o.Shards, Results: o.Results})
		},
		Check: func(sc *scenario.Scenario, path string, scripts func() (string, error)) error {
			dir, dirErr := scripts()
			if err := workloads.CheckScript(sc, path, dir); err != nil {
				if dirErr != nil {
					return fmt.Errorf("%w\n  (no bundled scripts to look in: %v)", err, dirErr)
				}
				return err
			}
			workloads.NoteExecutors(sc, path, dir)
			return nil
		},
		Tool:    "k6",
		Version: func(v string) map[string]string { return map[string]string{"k6": v} },
		Shape:   scenario.ShapeScript,
	})
	Register(scenario.EngineNative, Engine{
		New: func(o Options) NewLoad {
			return Native(NativeConfig{Executable: o.Executable, Shards: o.Shards, Results: o.Results})
		},
		Check: func(sc *scenario.Scenario, path string, _ func() (string, error)) error {
			return native.CheckGRPC(sc, path)
		},
		K8sJob:  true,
		Version: func(string) map[string]string { return map[string]string{"native": native.Version} },
		Shape:   scenario.ShapeStreams,
	})
}
