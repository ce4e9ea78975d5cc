package native

import (
	"cmp"
	"fmt"
	"maps"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/workloads/native/h1"
)

// lane is a stream compiled for a run: its schedule, templates, keys, tag
// variants and the channel its workers wait on.
type lane struct {
	*Stream
	idx   int
	sched *arrival.Schedule
	// jobs holds arrivals handed to workers; busy counts the jobs held
	// or waiting in the channel, at most nworkers; started counts the
	// workers started (by the dispatcher alone).
	jobs     chan job
	busy     atomic.Int64
	nworkers int64
	started  int64
	targets  []target
	keys     []*keyVar
	names    []string // the keys' names, sorted
	path     tmpl
	body     tmpl
	headers  []header
	// tags are the stream's tags; dims the {KEY.class} and {KEY.shard}
	// they read, whose values make a series' variant.
	tags   map[string]tmpl
	dims   []dim
	expect [600]bool
	// metricHeaders are the canonical names of the answer headers the
	// custom metrics read.
	metricHeaders []string
	// grpc is set for a gRPC stream (engine.dialGRPC).
	grpc *grpcLane
}

// target is one base URL of a stream.
type target struct {
	scheme, host, prefix string
	// fixed is the whole URL when the path is static.
	fixed *url.URL
	// pool sends to the target on the engine's own path (fast.go).
	pool *h1.Host
}

type header struct {
	name string // canonical
	val  tmpl
}

// dim is one dimension of the tag variant: a key's class (3 values) or
// shard (Shards values).
type dim struct {
	key, radix int
	shard      bool
}

// job is one arrival handed to a worker.
type job struct {
	g   uint64 // the arrival's index in its stream, across shards
	due int64  // Unix ns it was due
}

func compileLane(st *Stream, idx int, shards int) (*lane, error) {
	l := &lane{Stream: st, idx: idx, nworkers: int64(st.workers(shards))}
	l.jobs = make(chan job, l.nworkers)
	sched, err := arrival.NewSchedule(st.Arrival)
	if err != nil {
		return nil, err
	}
	l.sched = sched
	names := slices.Sorted(maps.Keys(st.Keys))
	for _, n := range names {
		v, err := newKeyVar(n, st.Keys[n])
		if err != nil {
			return nil, err
		}
		l.keys = append(l.keys, v)
	}
	if l.path, err = compileTemplate(st.Path, names, false); err != nil {
		return nil, fmt.Errorf("path: %w", err)
	}
	if l.body, err = compileTemplate(st.Body, names, false); err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	l.names = names
	for _, h := range slices.Sorted(maps.Keys(st.Headers)) {
		t, err := compileTemplate(st.Headers[h], names, false)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", h, err)
		}
		l.headers = append(l.headers, header{name: textproto.CanonicalMIMEHeaderKey(h), val: t})
	}
	if err := l.compileTags(names); err != nil {
		return nil, err
	}
	for _, s := range st.Expect {
		if s >= 0 && s < len(l.expect) {
			l.expect[s] = true
		}
	}
	for _, m := range st.Metrics {
		l.metricHeaders = append(l.metricHeaders, textproto.CanonicalMIMEHeaderKey(m.When.Header))
	}
	for _, t := range st.Targets {
		u, err := url.Parse(t)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", t, err)
		}
		tg := target{scheme: u.Scheme, host: u.Host, prefix: strings.TrimSuffix(u.Path, "/")}
		if l.path.isStatic {
			tg.fixed = splitURL(tg, l.path.static)
		}
		l.targets = append(l.targets, tg)
	}
	return l, nil
}

// splitURL builds the URL of a path (with its query) at a target.
func splitURL(t target, path string) *url.URL {
	p, q, _ := strings.Cut(path, "?")
	return &url.URL{Scheme: t.scheme, Host: t.host, Path: t.prefix + p, RawQuery: q}
}

func (l *lane) compileTags(names []string) error {
	l.tags = map[string]tmpl{}
	// used holds the (key, ref) pairs the tags read, in a fixed order.
	var used [][2]int
	for _, k := range slices.Sorted(maps.Keys(l.Tags)) {
		t, err := compileTemplate(l.Tags[k], names, true)
		if err != nil {
			return fmt.Errorf("tag %s: %w", k, err)
		}
		l.tags[k] = t
		for _, p := range t.parts {
			if u := [2]int{p.key, p.ref}; (p.ref == refClass || p.ref == refShard) && !slices.Contains(used, u) {
				used = append(used, u)
			}
		}
	}
	n := 1
	slices.SortFunc(used, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) })
	for _, u := range used {
		d := dim{key: u[0], radix: 3, shard: u[1] == refShard}
		if d.shard {
			if l.keys[d.key].shards <= 0 {
				return fmt.Errorf("tags: {%s.shard} needs shards: on keys %s", l.keys[d.key].name, l.keys[d.key].name)
			}
			d.radix = l.keys[d.key].shards
		}
		n *= d.radix
		if n > maxTagVariant {
			return fmt.Errorf("tags: the classes and shards they read make more than %d tag sets", maxTagVariant)
		}
		l.dims = append(l.dims, d)
	}
	return nil
}

// variant numbers the tag values an arrival's draw gives.
func (l *lane) variant(d *draw) uint16 {
	v, mult := 0, 1
	for _, dm := range l.dims {
		x := int(d.class[dm.key])
		if dm.shard {
			x = max(d.shard[dm.key], 0)
		}
		v += x * mult
		mult *= dm.radix
	}
	return uint16(v)
}

// tagsFor renders the stream's tags for a variant, with the scenario tag.
func (l *lane) tagsFor(variant uint16) map[string]string {
	d := draw{class: make([]uint8, len(l.keys)), shard: make([]int, len(l.keys))}
	v := int(variant)
	for _, dm := range l.dims {
		x := v % dm.radix
		v /= dm.radix
		if dm.shard {
			d.shard[dm.key] = x
		} else {
			d.class[dm.key] = uint8(x)
		}
	}
	out := map[string]string{"scenario": l.Name}
	for k, t := range l.tags {
		val := string(t.render(nil, &d))
		if m, ok := l.TagValues[k]; ok {
			if to, ok := m[val]; ok {
				val = to
			} else if to, ok := m["*"]; ok {
				val = to
			}
		}
		out[k] = val
	}
	return out
}
