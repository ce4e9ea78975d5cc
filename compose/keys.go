package compose

import "gopkg.in/yaml.v3"

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
