package resilience

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"

	"github.com/chaosrun/chaosrun/models/client"
	"github.com/chaosrun/chaosrun/models/keys"
)

// ModuleInstance is the k6/x/resilience module as one VU sees it.
type ModuleInstance struct {
	vu      modules.VU
	metrics *extMetrics
	names   client.HeaderNames
	// seq counts the clients and key streams this VU made, to seed each apart.
	seq uint64
}

// Exports lists what JavaScript sees in k6/x/resilience.
func (mi *ModuleInstance) Exports() modules.Exports {
	rt := mi.vu.Runtime()
	obj := func(fns map[string]func(sobek.FunctionCall) sobek.Value) *sobek.Object {
		o := rt.NewObject()
		for k, f := range fns {
			must(rt, o.Set(k, f))
		}
		return o
	}
	return modules.Exports{Named: map[string]any{
		"version":     mi.Version,
		"client":      mi.jsClient,
		"naive":       mi.modelCtor(client.ModelNaive),
		"backoff":     mi.modelCtor(client.ModelBackoff),
		"budgeted":    mi.modelCtor(client.ModelBudgeted),
		"smart":       mi.modelCtor(client.ModelSmart),
		"deadline":    mi.jsDeadline,
		"criticality": mi.jsCriticality,
		"headerNames": mi.jsHeaderNames,
		"toxiproxy":   mi.jsToxiproxy,
		"keys": obj(map[string]func(sobek.FunctionCall) sobek.Value{
			"uniform": mi.streamCtor(keys.Uniform),
			"zipf":    mi.streamCtor(keys.Zipf),
			"hotset":  mi.streamCtor(keys.Hotset),
			"bot":     mi.streamCtor(keys.Bot),
		}),
		"shapes": obj(map[string]func(sobek.FunctionCall) sobek.Value{
			"bursts":       mi.jsBursts,
			"stepOverload": mi.jsStepOverload,
			"flood":        mi.jsFlood,
		}),
	}}
}

// Version returns the extension's version string.
func (*ModuleInstance) Version() string { return Version }

// vuID returns the VU's number (__VU), 0 in the init context of the first run.
func (mi *ModuleInstance) vuID() uint64 {
	if st := mi.vu.State(); st != nil {
		return st.VUID
	}
	if v := mi.vu.Runtime().Get("__VU"); v != nil && !sobek.IsUndefined(v) {
		return uint64(max(v.ToInteger(), 0))
	}
	return 0
}

// mixSeed gives VU vu its own replayable seed from the script's seed.
func mixSeed(seed, vu, n uint64) uint64 {
	x := seed ^ (vu+1)*0x9e3779b97f4a7c15 ^ (n+1)*0xbf58476d1ce4e5b9
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	return x ^ x>>29
}

func must(rt *sobek.Runtime, err error) {
	if err != nil {
		common.Throw(rt, err)
	}
}

// toJS turns a Go value into plain JavaScript objects (through JSON), so a
// script can spread and change them.
func toJS(rt *sobek.Runtime, v any) sobek.Value {
	b, err := json.Marshal(v)
	if err != nil {
		common.Throw(rt, err)
	}
	return jsonParse(rt, b)
}

func jsonParse(rt *sobek.Runtime, b []byte) sobek.Value {
	if len(b) == 0 {
		return sobek.Undefined()
	}
	parse, ok := sobek.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse"))
	if !ok {
		common.Throw(rt, errors.New("JSON.parse is not a function"))
	}
	v, err := parse(sobek.Undefined(), rt.ToValue(string(b)))
	if err != nil {
		common.Throw(rt, err)
	}
	return v
}

// opts reads a script's options object.
type opts struct {
	what string
	m    map[string]any
	err  error
}

func newOpts(what string, v sobek.Value) *opts {
	o := &opts{what: what, m: map[string]any{}}
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return o
	}
	m, ok := v.Export().(map[string]any)
	if !ok {
		o.err = fmt.Errorf("%s: options must be an object, got %s", what, v.String())
		return o
	}
	o.m = m
	return o
}

func (o *opts) fail(key, want string, v any) {
	if o.err == nil {
		o.err = fmt.Errorf("%s: option %s: %v: want %s", o.what, key, v, want)
	}
}

func (o *opts) has(key string) bool { _, ok := o.m[key]; return ok }

func (o *opts) float(key string, def float64) float64 {
	v, ok := o.m[key]
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return x
		}
	}
	o.fail(key, "a number", v)
	return def
}

func (o *opts) int(key string, def int) int {
	f := o.float(key, float64(def))
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		o.fail(key, "a whole number", f)
		return def
	}
	return int(f)
}

func (o *opts) str(key, def string) string {
	v, ok := o.m[key]
	if !ok || v == nil {
		return def
	}
	s, ok := v.(string)
	if !ok {
		o.fail(key, "a string", v)
		return def
	}
	return s
}

func (o *opts) bool(key string, def bool) bool {
	v, ok := o.m[key]
	if !ok || v == nil {
		return def
	}
	b, ok := v.(bool)
	if !ok {
		o.fail(key, "true or false", v)
		return def
	}
	return b
}

// dur reads a duration: a number of milliseconds or a string like "250ms", "2s".
func (o *opts) dur(key string, def time.Duration) time.Duration {
	v, ok := o.m[key]
	if !ok || v == nil {
		return def
	}
	d, err := toDuration(v)
	if err != nil {
		o.fail(key, `milliseconds or a duration like "250ms", "2s"`, v)
		return def
	}
	return d
}

func toDuration(v any) (time.Duration, error) {
	switch x := v.(type) {
	case int64:
		return time.Duration(x) * time.Millisecond, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, errors.New("not a number")
		}
		return time.Duration(x * float64(time.Millisecond)), nil
	case string:
		return time.ParseDuration(strings.TrimSpace(x))
	}
	return 0, fmt.Errorf("%v: not a duration", v)
}

func (o *opts) ints(key string, def []int) []int {
	v, ok := o.m[key]
	if !ok || v == nil {
		return def
	}
	xs, ok := v.([]any)
	if !ok {
		o.fail(key, "a list of numbers", v)
		return def
	}
	out := make([]int, 0, len(xs))
	for _, x := range xs {
		switch n := x.(type) {
		case int64:
			out = append(out, int(n))
		case float64:
			out = append(out, int(n))
		default:
			o.fail(key, "a list of numbers", v)
			return def
		}
	}
	return out
}

func (o *opts) sub(key string) *opts {
	s := &opts{what: o.what + " " + key, m: map[string]any{}}
	v, ok := o.m[key]
	if !ok || v == nil {
		return s
	}
	m, ok := v.(map[string]any)
	if !ok {
		o.fail(key, "an object", v)
		return s
	}
	s.m = m
	return s
}
