package scenario

import (
	"fmt"
	"slices"
	"sync"
)

// Shape is how a workload on an engine is written: what the validator
// checks of it.
type Shape int

// The workload shapes.
const (
	// ShapeScript is a workload run by a script (script:, params:), as k6's.
	ShapeScript Shape = iota + 1
	// ShapeStreams is a workload of request streams (streams:, keys:,
	// clients:), as the native engine's.
	ShapeStreams
	// ShapeOwn is a workload whose engine checks it alone (its Check):
	// the validator checks only the duration.
	ShapeOwn
)

var (
	enginesMu sync.RWMutex
	engines   = map[string]Shape{EngineNative: ShapeStreams, EngineK6: ShapeScript}
)

// RegisterEngine makes workload.engine name valid, its workloads written
// as shape; workloads/engine's registry calls it for each engine. It
// panics when name is taken with another shape (a programming error).
func RegisterEngine(name string, shape Shape) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if old, ok := engines[name]; (ok && old != shape) || name == "" || shape < ShapeScript || shape > ShapeOwn {
		panic(fmt.Sprintf("scenario.RegisterEngine(%q, %d): unnamed, no such shape, or registered with shape %d", name, shape, old))
	}
	engines[name] = shape
}

// EngineShape is how workloads on the engine called name are written; 0
// when there is no such engine.
func EngineShape(name string) Shape {
	enginesMu.RLock()
	defer enginesMu.RUnlock()
	return engines[name]
}

// EngineNames lists the engines workload.engine may name, sorted.
func EngineNames() []string {
	enginesMu.RLock()
	defer enginesMu.RUnlock()
	out := make([]string, 0, len(engines))
	for n := range engines {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
