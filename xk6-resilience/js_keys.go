package resilience

import (
	"strconv"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/models/keys"
)

// defaultKeyCache is how many of the lowest key indices (Zipf's hottest
// ranks) a stream keeps as ready JavaScript values.
const defaultKeyCache = 4096

// jsStream is one key stream object of a script.
type jsStream struct {
	rt      *sobek.Runtime
	s       *keys.Stream
	bot     bool // a bot stream: every key is botKey
	prefix  string
	keys    []sobek.Value
	idx     []sobek.Value
	classes [3]sobek.Value // hot, cold, bot
	botKey  sobek.Value
}

// streamCtor is keys.uniform(options), keys.zipf(options), …
func (mi *ModuleInstance) streamCtor(kind string) func(sobek.FunctionCall) sobek.Value {
	return func(call sobek.FunctionCall) sobek.Value {
		rt := mi.vu.Runtime()
		o := newOpts("resilience.keys."+kind+"()", call.Argument(0))
		cfg := keys.Config{Kind: kind, N: uint64(max(o.int("n", 1000), 0)), S: o.float("s", 1.1),
			HotKeys: uint64(max(o.int("hot", 0), 0)), HotFraction: o.float("p", 0.9), Key: uint64(max(o.int("index", 0), 0))}
		if kind == keys.Hotset && !o.has("hot") {
			cfg.HotKeys = max(cfg.N/100, 1)
		}
		seed := uint64(o.int("seed", 1))
		if o.bool("perVU", true) {
			mi.seq++
			seed = mixSeed(seed, mi.vuID(), mi.seq)
		}
		cfg.Seed = seed
		prefix := o.str("prefix", "key-")
		cache := o.int("cache", defaultKeyCache)
		botKey := o.str("key", "")
		if o.err != nil {
			common.Throw(rt, o.err)
		}
		s, err := keys.New(cfg)
		if err != nil {
			common.Throw(rt, err)
		}
		n := uint64(max(cache, 0))
		if kind != keys.Bot {
			n = min(n, cfg.N)
		} else {
			n = 0
		}
		js := &jsStream{rt: rt, s: s, bot: kind == keys.Bot, prefix: prefix, keys: make([]sobek.Value, n), idx: make([]sobek.Value, n)}
		for i, c := range [...]string{keys.ClassHot, keys.ClassCold, keys.ClassBot} {
			js.classes[i] = rt.ToValue(c)
		}
		if botKey == "" {
			botKey = prefix + strconv.FormatUint(cfg.Key, 10)
		}
		js.botKey = rt.ToValue(botKey)
		obj := rt.NewObject()
		must(rt, obj.Set("kind", kind))
		must(rt, obj.Set("n", cfg.N))
		must(rt, obj.Set("next", js.next))
		must(rt, obj.Set("index", js.index))
		must(rt, obj.Set("class", js.class))
		return obj
	}
}

// next is stream.next(): the next key as a string (prefix + index).
func (j *jsStream) next(sobek.FunctionCall) sobek.Value {
	k := j.s.Next()
	if j.bot {
		return j.botKey
	}
	if k < uint64(len(j.keys)) {
		if v := j.keys[k]; v != nil {
			return v
		}
		v := j.rt.ToValue(j.prefix + strconv.FormatUint(k, 10))
		j.keys[k] = v
		return v
	}
	return j.rt.ToValue(j.prefix + strconv.FormatUint(k, 10))
}

// index is stream.index(): the next key as a number in [0, n).
func (j *jsStream) index(sobek.FunctionCall) sobek.Value {
	k := j.s.Next()
	if k < uint64(len(j.idx)) {
		if v := j.idx[k]; v != nil {
			return v
		}
		v := j.rt.ToValue(k)
		j.idx[k] = v
		return v
	}
	return j.rt.ToValue(k)
}

// class is stream.class(): "hot", "cold" or "bot" for the last key drawn.
func (j *jsStream) class(sobek.FunctionCall) sobek.Value {
	switch j.s.Class() {
	case keys.ClassHot:
		return j.classes[0]
	case keys.ClassCold:
		return j.classes[1]
	}
	return j.classes[2]
}

// vus reads preAllocatedVUs and maxVUs.
func vus(o *opts) arrival.VUs {
	return arrival.VUs{PreAllocated: o.int("preAllocatedVUs", 0), Max: o.int("maxVUs", 0)}
}

// jsBursts is shapes.bursts({base, peak, every, length, rise, duration, startTime}).
func (mi *ModuleInstance) jsBursts(call sobek.FunctionCall) sobek.Value {
	o := newOpts("resilience.shapes.bursts()", call.Argument(0))
	b := arrival.BurstShape{Base: o.int("base", 0), Peak: o.int("peak", 0), Every: o.dur("every", 0),
		Length: o.dur("length", 0), Rise: o.dur("rise", 0), Duration: o.dur("duration", 0),
		StartTime: o.dur("startTime", 0), VUs: vus(o)}
	return mi.shape(o, func() (arrival.Scenario, error) { return arrival.Bursts(b) })
}

// jsStepOverload is shapes.stepOverload({capacity, factor, baseline, before, rise, hold, after}).
func (mi *ModuleInstance) jsStepOverload(call sobek.FunctionCall) sobek.Value {
	o := newOpts("resilience.shapes.stepOverload()", call.Argument(0))
	s := arrival.StepShape{Capacity: o.int("capacity", 0), Factor: o.float("factor", 2), Baseline: o.float("baseline", 0.5),
		Before: o.dur("before", 0), Rise: o.dur("rise", 0), Hold: o.dur("hold", 0), After: o.dur("after", 0),
		StartTime: o.dur("startTime", 0), VUs: vus(o)}
	return mi.shape(o, func() (arrival.Scenario, error) { return arrival.StepOverload(s) })
}

// jsFlood is shapes.flood({rate, duration, startTime}).
func (mi *ModuleInstance) jsFlood(call sobek.FunctionCall) sobek.Value {
	o := newOpts("resilience.shapes.flood()", call.Argument(0))
	f := arrival.FloodShape{Rate: o.int("rate", 0), Duration: o.dur("duration", 0), StartTime: o.dur("startTime", 0), VUs: vus(o)}
	return mi.shape(o, func() (arrival.Scenario, error) { return arrival.Flood(f) })
}

func (mi *ModuleInstance) shape(o *opts, build func() (arrival.Scenario, error)) sobek.Value {
	rt := mi.vu.Runtime()
	if o.err != nil {
		common.Throw(rt, o.err)
	}
	sc, err := build()
	if err != nil {
		common.Throw(rt, err)
	}
	return toJS(rt, sc)
}
