package schemagen

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"
)

// thing stands for a type whose schema is generated.
type thing struct {
	Name  string            `json:"name"`
	Tags  map[string]string `json:"tags"`
	Items []string          `json:"items"`
	More  []string          `json:"more,omitempty"`
	Blob  []byte            `json:"blob"`
	Kind  string            `json:"kind,omitempty"`
}

const thingSource = `package schemagen

// thing is a thing. It has more to say.
type thing struct {
	// Name names it.
	Name string
}
`

func generate(t *testing.T, sp Spec) map[string]any {
	t.Helper()
	sp.Root, sp.Sources = &thing{}, fstest.MapFS{"thing.go": {Data: []byte(thingSource)}}
	b, err := Generate(sp)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m["$defs"].(map[string]any)["thing"].(map[string]any)
}

func TestGenerate(t *testing.T) {
	def := generate(t, Spec{Nulls: true, Const: map[string]any{"thing.name": "x"}, Enum: map[string][]string{"thing.kind": {"a", "b"}}})
	props := def["properties"].(map[string]any)
	for _, tc := range []struct{ what, got, want string }{
		{"type description: the synopsis", def["description"].(string), "thing is a thing."},
		{"field description", props["name"].(map[string]any)["description"].(string), "Name names it."},
		{"required: fields without omitempty", jsonOf(def["required"]), `["name","tags","items","blob"]`},
		{"no other properties", jsonOf(def["additionalProperties"]), "false"},
		{"a map without omitempty may be null", jsonOf(props["tags"]), `{"anyOf":[{"additionalProperties":{"type":"string"},"type":"object"},{"type":"null"}]}`},
		{"a slice without omitempty may be null", jsonOf(props["items"]), `{"anyOf":[{"items":{"type":"string"},"type":"array"},{"type":"null"}]}`},
		{"a slice with omitempty may not", jsonOf(props["more"]), `{"items":{"type":"string"},"type":"array"}`},
		{"bytes are a string, or null", jsonOf(props["blob"]), `{"anyOf":[{"contentEncoding":"base64","type":"string"},{"type":"null"}]}`},
		{"const", jsonOf(props["name"].(map[string]any)["const"]), `"x"`},
		{"enum", jsonOf(props["kind"]), `{"enum":["a","b"],"type":"string"}`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.what, tc.got, tc.want)
		}
	}
	if props := generate(t, Spec{}); jsonOf(props["properties"].(map[string]any)["items"]) != `{"items":{"type":"string"},"type":"array"}` {
		t.Error("without Nulls, a slice may be null")
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestGenerateRefusesUnknownKeys: a Const or Enum key that names nothing
// (a field renamed) is an error, not a looser schema.
func TestGenerateRefusesUnknownKeys(t *testing.T) {
	for _, sp := range []Spec{
		{Const: map[string]any{"thing.version": 1}},
		{Enum: map[string][]string{"other.kind": {"a"}}},
	} {
		sp.Root, sp.Sources = &thing{}, fstest.MapFS{}
		if _, err := Generate(sp); err == nil || !strings.Contains(err.Error(), "no ") {
			t.Errorf("%v: got %v", sp, err)
		}
	}
}
