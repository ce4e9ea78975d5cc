package k8s

import (
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/message"
)

// listTypeVocab asserts Kubernetes' x-kubernetes-list-type: in a "map"
// list no two items have the same values of x-kubernetes-list-map-keys
// (two containers or two env vars of one name), in a "set" no two items
// are equal. The API server refuses both ("Duplicate value").
func listTypeVocab() *jsonschema.Vocabulary {
	const url = "mem:///vocab/x-kubernetes-list-type"
	meta, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"properties": {
		"x-kubernetes-list-type": {"enum": ["atomic", "set", "map"]},
		"x-kubernetes-list-map-keys": {"type": "array", "items": {"type": "string"}}}}`))
	if err != nil {
		panic(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, meta); err != nil {
		panic(err)
	}
	return &jsonschema.Vocabulary{URL: url, Schema: c.MustCompile(url), Compile: compileListType}
}

// listKeyDefaults is the keyword makeStrict adds to a list-type map
// schema: the defaults of its keys, by key.
const listKeyDefaults = "x-chaosrun-list-map-key-defaults"

func compileListType(_ *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
	switch obj["x-kubernetes-list-type"] {
	case "set":
		return listType{}, nil
	case "map":
		keys, _ := obj["x-kubernetes-list-map-keys"].([]any)
		if len(keys) == 0 {
			return nil, fmt.Errorf("x-kubernetes-list-type map without x-kubernetes-list-map-keys")
		}
		defaults, _ := obj[listKeyDefaults].(map[string]any)
		lt := listType{keys: make([]string, len(keys)), defaults: defaults}
		for i, k := range keys {
			lt.keys[i] = k.(string)
		}
		return lt, nil
	}
	return nil, nil
}

// listType is a compiled x-kubernetes-list-type: keys nil for a set;
// defaults stand for keys an item leaves out.
type listType struct {
	keys     []string
	defaults map[string]any
}

func (lt listType) Validate(ctx *jsonschema.ValidatorContext, v any) {
	items, ok := v.([]any)
	if !ok {
		return
	}
	ids := items
	if lt.keys != nil {
		ids = make([]any, len(items))
		for i, item := range items {
			obj, _ := item.(map[string]any)
			id := make([]any, len(lt.keys))
			for j, k := range lt.keys {
				v, ok := obj[k]
				if !ok {
					v = lt.defaults[k]
				}
				id[j] = v
			}
			ids[i] = id
		}
	}
	i, j, err := ctx.Duplicates(ids)
	if err != nil {
		ctx.AddErr(err)
		return
	}
	if i >= 0 {
		ctx.AddError(&duplicateItems{lt.keys, i, j})
	}
}

// duplicateItems is the error of two items that a list type forbids.
type duplicateItems struct {
	keys []string
	i, j int
}

func (*duplicateItems) KeywordPath() []string { return []string{"x-kubernetes-list-type"} }

func (d *duplicateItems) LocalizedString(p *message.Printer) string {
	if d.keys == nil {
		return p.Sprintf("items at %d and %d are equal (x-kubernetes-list-type set)", d.i, d.j)
	}
	return p.Sprintf("items at %d and %d have the same %s (x-kubernetes-list-type map)", d.i, d.j, strings.Join(d.keys, ", "))
}

// TestStrictSchemaPieces shows each piece of the strict checking on a
// small schema: unknown fields refused where Kubernetes refuses them and
// kept where it keeps them; map and set list types.
func TestStrictSchemaPieces(t *testing.T) {
	raw := `{"type": "object", "properties": {
		"open": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"a": {"type": "string"}}},
		"labels": {"type": "object", "additionalProperties": {"type": "string"}},
		"wrapped": {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}], "default": {}},
		"schemaLike": {"type": "object", "properties": {"properties": {"type": "object", "properties": {"x": {"type": "string"}}}}},
		"ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
			"items": {"type": "object", "properties": {"port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}}}},
		"args": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}`
	doc, err := yamlObject([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	makeStrict(doc, nil)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	c.RegisterVocabulary(listTypeVocab())
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		t.Fatal(err)
	}
	s := c.MustCompile("mem:///s.json")
	for _, tc := range []struct{ name, doc, want string }{
		{"known fields", `{"open": {"a": "x", "b": 1}, "labels": {"k": "v"}, "wrapped": {"a": "x"}, "schemaLike": {"properties": {"x": "y"}},
			"ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}], "args": ["a", "b"]}`, ""},
		{"unknown field", `{"nope": 1}`, "'nope' not allowed"},
		{"unknown field inside allOf", `{"wrapped": {"b": 1}}`, "'b' not allowed"},
		{"a property named properties is no keyword", `{"schemaLike": {"properties": {"x": "y", "z": 1}}}`, "'z' not allowed"},
		{"same map keys", `{"ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "TCP"}]}`, "items at 0 and 1 have the same port, protocol"},
		{"same map keys, one by default", `{"ports": [{"port": 80}, {"port": 80, "protocol": "TCP"}]}`, "items at 0 and 1 have the same port, protocol"},
		{"same set items", `{"args": ["a", "a"]}`, "items at 0 and 1 are equal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := yamlObject([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			err = s.Validate(v)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
