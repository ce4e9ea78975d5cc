package compose

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/chaosrun/chaosrun/scenario"
)

// keySet is what a mapping may hold; nested says how to check the value of
// a key that is a mapping (or a list of mappings) of its own.
type keySet struct {
	keys   []string
	nested map[string]*keySet
	// anyKey takes every key (names of services, variables) and checks
	// each value with value.
	anyKey bool
	value  *keySet
}

var (
	dependsOnKeys   = &keySet{anyKey: true, value: &keySet{keys: []string{"condition", "required"}}}
	healthcheckKeys = &keySet{keys: []string{"test", "interval", "timeout", "retries", "start_period", "start_interval", "disable"}}
	portKeys        = &keySet{keys: []string{"target", "published", "protocol", "host_ip"}}
	serviceKeys     = &keySet{
		keys: []string{"image", "command", "entrypoint", "environment", "env_file", "ports", "expose", "depends_on", "healthcheck"},
		nested: map[string]*keySet{
			"depends_on":  dependsOnKeys,
			"healthcheck": healthcheckKeys,
			"ports":       portKeys,
		},
	}
	topKeys = &keySet{
		keys:   []string{"name", "version", "services"},
		nested: map[string]*keySet{"services": {anyKey: true, value: serviceKeys}},
	}
)

// Supported lists the Compose keys chaosrun honours, for documentation.
func Supported() []string {
	out := slices.Clone(topKeys.keys)
	for _, k := range serviceKeys.keys {
		entry := "services.*." + k
		if n := serviceKeys.nested[k]; n != nil {
			sub := n.keys
			if n.anyKey {
				sub = n.value.keys
			}
			entry += " (" + strings.Join(sub, ", ") + ")"
		}
		out = append(out, entry)
	}
	return append(out, "x-* extensions (anywhere; for anchors)")
}

// checkKeys reports every key of the file chaosrun does not honour, at its
// line and column: compose-go would parse it, and chaosrun would ignore it
// silently.
func checkKeys(file string, root *yaml.Node) scenario.Errors {
	var errs scenario.Errors
	walkKeys(file, root, "", topKeys, &errs, 0)
	return errs
}

func walkKeys(file string, n *yaml.Node, path string, ks *keySet, errs *scenario.Errors, depth int) {
	n = deref(n)
	if n == nil || depth > 20 {
		return
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, e := range n.Content {
			walkKeys(file, e, path+"[]", ks, errs, depth+1)
		}
		return
	case yaml.MappingNode:
	default:
		return
	}
	for _, p := range mappingPairs(n, 0) {
		k := p[0].Value
		kp := join(path, k)
		switch {
		case strings.HasPrefix(k, "x-"):
			continue
		case ks.anyKey:
			if ks.value != nil {
				walkKeys(file, p[1], kp, ks.value, errs, depth+1)
			}
		case !slices.Contains(ks.keys, k):
			*errs = append(*errs, &scenario.Error{File: file, Line: p[0].Line, Col: p[0].Column, Field: kp,
				Msg: fmt.Sprintf("Compose key %q is not supported by chaosrun", k), Allowed: strings.Join(ks.keys, ", ") + ", x-*"})
		case ks.nested[k] != nil:
			walkKeys(file, p[1], kp, ks.nested[k], errs, depth+1)
		}
	}
}

// mappingPairs lists a mapping's key/value pairs, expanding merge keys
// (<<) into the keys they bring.
func mappingPairs(n *yaml.Node, depth int) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && depth < 10 {
			for _, src := range mergeSources(v) {
				out = append(out, mappingPairs(src, depth+1)...)
			}
			continue
		}
		if k = deref(k); k != nil && k.Kind == yaml.ScalarNode {
			out = append(out, [2]*yaml.Node{k, v})
		}
	}
	return out
}

func mergeSources(v *yaml.Node) []*yaml.Node {
	v = deref(v)
	switch {
	case v == nil:
		return nil
	case v.Kind == yaml.MappingNode:
		return []*yaml.Node{v}
	case v.Kind == yaml.SequenceNode:
		var out []*yaml.Node
		for _, e := range v.Content {
			if e = deref(e); e != nil && e.Kind == yaml.MappingNode {
				out = append(out, e)
			}
		}
		return out
	}
	return nil
}

// deref follows aliases (a bounded number of times).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 20 {
			return nil
		}
		n = n.Alias
	}
	return n
}

// keyNode returns the key node of path ("services", "app") in root, for
// its position; nil when there is none.
func keyNode(root *yaml.Node, path ...string) *yaml.Node {
	n := deref(root)
	for i, k := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var val *yaml.Node
		for _, p := range mappingPairs(n, 0) {
			if p[0].Value == k {
				if i == len(path)-1 {
					return p[0]
				}
				val = p[1]
				break
			}
		}
		n = deref(val)
	}
	return nil
}

// join adds key to a key path; an empty key is written "".
func join(path, key string) string {
	if key == "" {
		key = `""`
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
