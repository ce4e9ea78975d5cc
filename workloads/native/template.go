package native

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/chaosrun/chaosrun/models/keys"
	"github.com/chaosrun/chaosrun/scenario"
)

// What a template placeholder refers to.
const (
	refText  = iota // literal text
	refKey          // {KEY}: the key as written
	refSeq          // {seq}: the arrival's index in its stream
	refSeed         // {seed}: the spec's seed
	refClass        // {KEY.class}: hot, cold or bot
	refShard        // {KEY.shard}: the key's shard
)

// part is one piece of a template.
type part struct {
	ref  int
	text string // refText
	key  int    // index into the stream's keys
}

// tmpl is a compiled template.
type tmpl struct {
	parts []part
	// static holds the whole text when there is no placeholder.
	static   string
	isStatic bool
}

// compileTemplate compiles a template (scenario.ParseTemplate's syntax)
// against a stream's key names; in tags only {KEY.class} and {KEY.shard}.
func compileTemplate(text string, keyNames []string, tagsOnly bool) (tmpl, error) {
	var t tmpl
	for _, p := range scenario.ParseTemplate(text) {
		if p.Name == "" {
			t.parts = append(t.parts, part{ref: refText, text: p.Text})
			continue
		}
		r, err := resolve(p.Name, keyNames, tagsOnly)
		if err != nil {
			return tmpl{}, err
		}
		t.parts = append(t.parts, r)
	}
	if len(t.parts) == 0 || (len(t.parts) == 1 && t.parts[0].ref == refText) {
		t.isStatic = true
		if len(t.parts) == 1 {
			t.static = t.parts[0].text
		}
	}
	return t, nil
}

func resolve(name string, keyNames []string, tagsOnly bool) (part, error) {
	base, attr, dotted := strings.Cut(name, ".")
	k := slices.Index(keyNames, base)
	switch {
	case !dotted && !tagsOnly && name == "seq":
		return part{ref: refSeq}, nil
	case !dotted && !tagsOnly && name == "seed":
		return part{ref: refSeed}, nil
	case !dotted && !tagsOnly && k >= 0:
		return part{ref: refKey, key: k}, nil
	case dotted && k >= 0 && attr == "class":
		return part{ref: refClass, key: k}, nil
	case dotted && k >= 0 && attr == "shard":
		return part{ref: refShard, key: k}, nil
	}
	return part{}, fmt.Errorf("unknown placeholder {%s}", name)
}

// draw is one arrival's choices that templates read.
type draw struct {
	seq   uint64
	seed  string
	text  [][]byte // per key: the key as written
	class []uint8  // per key: index into classNames
	shard []int    // per key: its shard, -1 without shards
}

var classNames = [...]string{keys.ClassHot, keys.ClassCold, keys.ClassBot}

func classIndex(c string) uint8 {
	switch c {
	case keys.ClassHot:
		return 0
	case keys.ClassCold:
		return 1
	}
	return 2
}

// render appends the template's text for d to b.
func (t *tmpl) render(b []byte, d *draw) []byte {
	if t.isStatic {
		return append(b, t.static...)
	}
	for _, p := range t.parts {
		switch p.ref {
		case refText:
			b = append(b, p.text...)
		case refKey:
			b = append(b, d.text[p.key]...)
		case refSeq:
			b = strconv.AppendUint(b, d.seq, 10)
		case refSeed:
			b = append(b, d.seed...)
		case refClass:
			b = append(b, classNames[d.class[p.key]]...)
		case refShard:
			b = strconv.AppendInt(b, int64(d.shard[p.key]), 10)
		}
	}
	return b
}

// keyVar is one compiled key stream of a stream.
type keyVar struct {
	name   string
	s      *keys.Stream
	list   []uint64 // the keys kept by Only, in order; nil: all
	prefix string
	text   string
	width  int
	shards int
}

// maxOnlyKeys bounds the key space that Only may filter.
const maxOnlyKeys = 1 << 22

func newKeyVar(name string, k Keys) (*keyVar, error) {
	v := &keyVar{name: name, prefix: k.Prefix, text: k.Text, width: k.Width, shards: k.Shards}
	cfg := k.Config
	if len(k.Only) > 0 && cfg.Kind != keys.Bot {
		if cfg.N > maxOnlyKeys {
			return nil, fmt.Errorf("keys %s: only: the key space %d is larger than %d", name, cfg.N, maxOnlyKeys)
		}
		keep := map[int]bool{}
		for _, s := range k.Only {
			keep[s] = true
		}
		var buf []byte
		for i := range cfg.N {
			buf = v.appendText(buf[:0], i)
			if keep[v.shardOf(buf)] {
				v.list = append(v.list, i)
			}
		}
		if len(v.list) == 0 {
			return nil, fmt.Errorf("keys %s: no key of the %d is on shards %v", name, cfg.N, k.Only)
		}
		cfg.N = uint64(len(v.list))
		cfg.HotKeys = min(cfg.HotKeys, cfg.N)
	}
	s, err := keys.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("keys %s: %w", name, err)
	}
	v.s = s
	return v, nil
}

// at returns arrival g's key index and class.
func (v *keyVar) at(g uint64) (uint64, uint8) {
	i := v.s.At(g)
	c := classIndex(v.s.ClassOf(i))
	if v.list != nil {
		i = v.list[i]
	}
	return i, c
}

// appendText writes key index i.
func (v *keyVar) appendText(b []byte, i uint64) []byte {
	if v.text != "" && v.s != nil && v.s.Config().Kind == keys.Bot {
		return append(b, v.text...)
	}
	b = append(b, v.prefix...)
	var num [20]byte
	d := strconv.AppendUint(num[:0], i, 10)
	for n := len(d); n < v.width; n++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// shardOf is the shard of a key as written: FNV-1a 32 mod shards, the
// routing of the reference key-value dispatcher.
func (v *keyVar) shardOf(text []byte) int {
	if v.shards <= 0 {
		return -1
	}
	h := uint32(2166136261)
	for _, c := range text {
		h ^= uint32(c)
		h *= 16777619
	}
	return int(h % uint32(v.shards))
}
