package scenario

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// maxNodes bounds how many YAML nodes one file may expand to, so aliases of
// aliases cannot blow up the decoder; maxDepth bounds nesting (an alias
// may refer to its own ancestor).
const (
	maxNodes = 100_000
	maxDepth = 50
)

var durationType = reflect.TypeFor[Duration]()

// decoder fills Go values from a yaml.Node tree, strictly, remembering the
// position of every value and reporting every problem it finds.
type decoder struct {
	file   string
	m      *meta
	errs   Errors
	budget int
	depth  int
}

func (d *decoder) errAt(n *yaml.Node, path, allowed, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Col: n.Column, Field: path, Msg: fmt.Sprintf(format, args...), Allowed: allowed})
}

// bad reports a problem with the value at path and marks the path so that
// validation does not report it again.
func (d *decoder) bad(n *yaml.Node, path, allowed, format string, args ...any) {
	d.errAt(n, path, allowed, format, args...)
	d.m.bad[path] = true
}

// spend takes n from the node budget; once it runs out, it reports so
// (once) and returns false.
func (d *decoder) spend(n int, at *yaml.Node, path string) bool {
	if d.budget < 0 {
		return false
	}
	if d.budget -= n; d.budget < 0 {
		d.bad(at, path, "", "the file expands to more than %d values (aliases?)", maxNodes)
		return false
	}
	return true
}

// resolve follows aliases; it returns nil for a dangling one.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// describe names a node's value for "got ..." in messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return strconv.Quote(n.Value)
		case "!!null":
			return "nothing"
		default:
			return n.Value
		}
	}
	return "an unknown YAML node"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// value decodes n into v; path names v for errors and positions.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string, loose bool) {
	n = resolve(n)
	if n == nil {
		return
	}
	if !d.spend(1, n, path) {
		return
	}
	if d.depth >= maxDepth {
		d.bad(n, path, "", "nested more than %d levels deep (an alias inside its own anchor?)", maxDepth)
		return
	}
	d.depth++
	defer func() { d.depth-- }()
	d.m.pos[path] = position{file: d.file, line: n.Line, col: n.Column}
	if isNull(n) {
		return
	}
	if v.CanAddr() {
		if sd, ok := v.Addr().Interface().(selfDecoder); ok {
			sd.decodeNode(d, n, path)
			return
		}
	}
	t := v.Type()
	switch {
	case t == durationType:
		d.duration(n, v, path)
	case t.Kind() == reflect.Pointer:
		e := reflect.New(t.Elem())
		d.value(n, e.Elem(), path, loose)
		v.Set(e)
	case t.Kind() == reflect.Struct:
		d.structure(n, v, path)
	case t.Kind() == reflect.Map:
		d.mapping(n, v, path)
	case t.Kind() == reflect.Slice:
		d.list(n, v, path)
	case t.Kind() == reflect.String:
		switch {
		case n.Kind != yaml.ScalarNode:
			d.bad(n, path, "", "want a string, got %s", describe(n))
		case n.ShortTag() != "!!str" && !loose:
			d.bad(n, path, "", "want a string, got %s %s (quote it: %q)", strings.TrimPrefix(n.ShortTag(), "!!"), n.Value, n.Value)
		default:
			v.SetString(n.Value)
		}
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64 || t.Kind() == reflect.Bool || t.Kind() == reflect.Float64:
		d.number(n, v, path)
	default:
		d.bad(n, path, "", "cannot decode into %s", t)
	}
}

// number decodes an integer, a float or a bool scalar into v.
func (d *decoder) number(n *yaml.Node, v reflect.Value, path string) {
	tag := n.ShortTag()
	switch v.Kind() {
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || tag != "!!bool" || n.Decode(&b) != nil {
			d.bad(n, path, "true, false", "want true or false, got %s", describe(n))
			return
		}
		v.SetBool(b)
	case reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil {
			d.bad(n, path, "", "want a number, got %s", describe(n))
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			d.bad(n, path, "", "want a finite number, got %s", n.Value)
			return
		}
		v.SetFloat(f)
	default:
		var i int64
		if n.Kind != yaml.ScalarNode || tag != "!!int" || n.Decode(&i) != nil {
			d.bad(n, path, "", "want an integer, got %s", describe(n))
			return
		}
		if v.OverflowInt(i) {
			d.bad(n, path, "", "integer %s is out of range", n.Value)
			return
		}
		v.SetInt(i)
	}
}

// duration decodes a string like "20s" or "1m30s"; a bare number is an
// error, since its unit would be a guess.
func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	const want = "want a duration like 20s or 1m30s"
	if n.Kind != yaml.ScalarNode {
		d.bad(n, path, "", "%s, got %s", want, describe(n))
		return
	}
	switch n.ShortTag() {
	case "!!str":
		dur, err := time.ParseDuration(strings.TrimSpace(n.Value))
		if err != nil {
			d.bad(n, path, "", "%s, got %q", want, n.Value)
			return
		}
		v.SetInt(int64(dur))
	case "!!int", "!!float":
		d.bad(n, path, "", "%s, got %s: a bare number has no unit (write %ss or %sms)", want, n.Value, n.Value, n.Value)
	default:
		d.bad(n, path, "", "%s, got %s", want, describe(n))
	}
}

// selfDecoder is a type with several YAML shapes that decodes its own node.
type selfDecoder interface {
	decodeNode(d *decoder, n *yaml.Node, path string)
}

// pair is one key/value of a mapping.
type pair struct{ key, value *yaml.Node }

// pairs lists a mapping's entries, expanding YAML merge keys (<<); keys
// written in the mapping win over merged ones. It reports non-string keys.
func (d *decoder) pairs(n *yaml.Node, path string, depth int) []pair {
	if depth > maxDepth {
		d.bad(n, path, "", "merges (<<) nest more than %d levels deep (a << inside its own anchor?)", maxDepth)
		return nil
	}
	var out, merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merged = append(merged, d.mergeSources(val, path, depth+1)...)
			continue
		}
		k = resolve(k)
		if k == nil || k.Kind != yaml.ScalarNode {
			d.errAt(n.Content[i], path, "", "a key must be a plain name")
			continue
		}
		out = append(out, pair{k, val})
	}
	for _, p := range merged {
		if !hasKey(out, p.key.Value) {
			out = append(out, p)
		}
	}
	return out
}

func (d *decoder) mergeSources(val *yaml.Node, path string, depth int) []pair {
	val = resolve(val)
	if val == nil {
		return nil
	}
	if !d.spend(len(val.Content), val, path) {
		return nil
	}
	switch val.Kind {
	case yaml.MappingNode:
		return d.pairs(val, path, depth)
	case yaml.SequenceNode:
		var out []pair
		for _, e := range val.Content {
			for _, p := range d.mergeSources(e, path, depth+1) {
				if !hasKey(out, p.key.Value) {
					out = append(out, p)
				}
			}
		}
		return out
	}
	d.errAt(val, path, "", "<< merges a mapping, got %s", describe(val))
	return nil
}

func hasKey(ps []pair, key string) bool {
	for _, p := range ps {
		if p.key.Value == key {
			return true
		}
	}
	return false
}

// uniquePairs returns the entries of mapping n, reporting duplicate keys.
func (d *decoder) uniquePairs(n *yaml.Node, path string) []pair {
	ps := d.pairs(n, path, 0)
	first := map[string]*yaml.Node{}
	out := ps[:0:0]
	for _, p := range ps {
		if f, dup := first[p.key.Value]; dup {
			d.errAt(p.key, join(path, p.key.Value), "", "duplicate key %q (first at line %d)", p.key.Value, f.Line)
			continue
		}
		first[p.key.Value] = p.key
		out = append(out, p)
	}
	return out
}

// join appends a map key or field name to a path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// field is one YAML-visible field of a struct.
type field struct {
	name     string
	index    int
	required bool
}

// fieldsOf lists the struct's fields by their yaml tags, in declaration order.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out = append(out, field{name: name, index: i, required: !strings.Contains(opts, "omitempty")})
	}
	return out
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.bad(n, path, "", "want a mapping of fields, got %s", describe(n))
		return
	}
	fields := fieldsOf(v.Type())
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	seen := map[string]bool{}
	for _, p := range d.uniquePairs(n, path) {
		fp := join(path, p.key.Value)
		i := fieldIndex(fields, p.key.Value)
		if i < 0 {
			d.errAt(p.key, fp, allowedList(names), "unknown field %q", p.key.Value)
			continue
		}
		seen[p.key.Value] = true
		d.m.keyPos[fp] = position{file: d.file, line: p.key.Line, col: p.key.Column}
		d.value(p.value, v.Field(fields[i].index), fp, false)
	}
	for _, f := range fields {
		if f.required && !seen[f.name] {
			fp := join(path, f.name)
			d.errAt(n, fp, "", "missing (required)")
			d.m.bad[fp] = true
		}
	}
}

func fieldIndex(fields []field, name string) int {
	for i, f := range fields {
		if f.name == name {
			return i
		}
	}
	return -1
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.bad(n, path, "", "want a mapping of names to values, got %s", describe(n))
		return
	}
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		d.bad(n, path, "", "cannot decode into %s", t)
		return
	}
	m := reflect.MakeMap(t)
	loose := t.Elem().Kind() == reflect.String // config and params keep any scalar's text
	var order []string
	for _, p := range d.uniquePairs(n, path) {
		fp := join(path, p.key.Value)
		d.m.keyPos[fp] = position{file: d.file, line: p.key.Line, col: p.key.Column}
		e := reflect.New(t.Elem()).Elem()
		d.value(p.value, e, fp, loose)
		m.SetMapIndex(reflect.ValueOf(p.key.Value).Convert(t.Key()), e)
		order = append(order, p.key.Value)
	}
	d.m.order[path] = order
	v.Set(m)
}

func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.bad(n, path, "", "want a list, got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, e := range n.Content {
		d.value(e, s.Index(i), fmt.Sprintf("%s[%d]", path, i), false)
	}
	v.Set(s)
}
