package k8s

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// schemaDir holds the schemas the exported manifests are checked against;
// its README.md says where each came from and how to refresh it.
var schemaDir = filepath.Join("testdata", "schemas")

// schemaSet validates Kubernetes objects against the schema of their
// apiVersion and kind: Kubernetes' OpenAPI v3 component schemas and the
// openAPIV3Schema of CRDs, compiled by santhosh-tekuri/jsonschema.
//
// The schemas are made strict the way the API server's strict field
// validation is (kubectl apply --validate=strict): an object schema that
// lists properties and neither says additionalProperties nor
// x-kubernetes-preserve-unknown-fields gets additionalProperties: false, so
// an unknown field is an error. Kubernetes' list types are checked as the
// API server does: no two items of an x-kubernetes-list-type "map" list
// share their x-kubernetes-list-map-keys, no two of a "set" are equal.
type schemaSet struct {
	c *jsonschema.Compiler
	// locs maps "apiVersion kind" to the schema's location.
	locs     map[string]string
	compiled map[string]*jsonschema.Schema
}

// loadSchemas reads every *.json OpenAPI spec and *.yaml CRD under dir.
func loadSchemas(dir string) (*schemaSet, error) {
	s := &schemaSet{c: jsonschema.NewCompiler(), locs: map[string]string{}, compiled: map[string]*jsonschema.Schema{}}
	// OpenAPI 3.0's schema objects are JSON Schema draft 4 with a few
	// extensions; x-kubernetes-* keywords are left to listTypeVocab.
	s.c.DefaultDraft(jsonschema.Draft4)
	s.c.AssertFormat()
	for _, f := range k8sFormats {
		s.c.RegisterFormat(f)
	}
	s.c.AssertVocabs()
	s.c.RegisterVocabulary(listTypeVocab())
	err := filepath.WalkDir(dir, func(file string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, file)
		if err != nil {
			return err
		}
		url := "mem:///" + filepath.ToSlash(rel)
		switch filepath.Ext(file) {
		case ".json":
			err = s.addSpec(file, url)
		case ".yaml":
			err = s.addCRD(file, url)
		default:
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(s.locs) == 0 {
		return nil, fmt.Errorf("no schemas in %s", dir)
	}
	return s, nil
}

// addSpec adds an OpenAPI v3 spec: each component schema with an
// x-kubernetes-group-version-kind is the schema of that kind.
func (s *schemaSet) addSpec(file, url string) error {
	doc, err := readJSON(file, false)
	if err != nil {
		return err
	}
	schemas, _ := dig(doc, "components", "schemas").(map[string]any)
	if len(schemas) == 0 {
		return errors.New("no components.schemas")
	}
	for name, sch := range schemas {
		makeStrict(sch, schemas)
		gvks, _ := sch.(map[string]any)["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			g, _ := g.(map[string]any)
			group, _ := g["group"].(string)
			key := path.Join(group, g["version"].(string)) + " " + g["kind"].(string)
			if _, dup := s.locs[key]; !dup {
				s.locs[key] = url + "#/components/schemas/" + name
			}
		}
	}
	return s.c.AddResource(url, doc)
}

// addCRD adds a CustomResourceDefinition: the openAPIV3Schema of each of
// its versions is the schema of group/version and its kind.
func (s *schemaSet) addCRD(file, url string) error {
	doc, err := readJSON(file, true)
	if err != nil {
		return err
	}
	if k, _ := dig(doc, "kind").(string); k != "CustomResourceDefinition" {
		return fmt.Errorf("kind %q, want a CustomResourceDefinition", k)
	}
	group, _ := dig(doc, "spec", "group").(string)
	kind, _ := dig(doc, "spec", "names", "kind").(string)
	versions, _ := dig(doc, "spec", "versions").([]any)
	for i, v := range versions {
		name, _ := dig(v, "name").(string)
		sch := dig(v, "schema", "openAPIV3Schema")
		if group == "" || kind == "" || name == "" || sch == nil {
			return fmt.Errorf("version %d: no group, kind, name or openAPIV3Schema", i)
		}
		makeStrict(sch, nil)
		s.locs[group+"/"+name+" "+kind] = fmt.Sprintf("%s#/spec/versions/%d/schema/openAPIV3Schema", url, i)
	}
	return s.c.AddResource(url, doc)
}

// schema returns the compiled schema of apiVersion and kind.
func (s *schemaSet) schema(apiVersion, kind string) (*jsonschema.Schema, error) {
	key := apiVersion + " " + kind
	if sch, ok := s.compiled[key]; ok {
		return sch, nil
	}
	loc, ok := s.locs[key]
	if !ok {
		return nil, fmt.Errorf("no schema for kind %q of apiVersion %q in %s (its README.md says how to add one)", kind, apiVersion, schemaDir)
	}
	sch, err := s.c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("compile the schema of %s: %w", key, err)
	}
	s.compiled[key] = sch
	return sch, nil
}

// validate checks one decoded object (JSON numbers as json.Number)
// against the schema of its apiVersion and kind.
func (s *schemaSet) validate(obj any) error {
	apiVersion, _ := dig(obj, "apiVersion").(string)
	kind, _ := dig(obj, "kind").(string)
	sch, err := s.schema(apiVersion, kind)
	if err != nil {
		return err
	}
	return sch.Validate(obj)
}

// validateStream checks every document of a multi-document YAML stream;
// the error names each document that fails, by number, kind and name.
func (s *schemaSet) validateStream(data []byte) error {
	var errs []error
	for i, doc := range splitDocs(data) {
		obj, err := yamlObject(doc)
		if err == nil {
			err = s.validate(obj)
		}
		if err != nil {
			kind, _ := dig(obj, "kind").(string)
			name, _ := dig(obj, "metadata", "name").(string)
			errs = append(errs, fmt.Errorf("document %d (%s %s): %w", i+1, kind, name, err))
		}
	}
	return errors.Join(errs...)
}

// yamlObject decodes one YAML document the way the API server reads it:
// as JSON, numbers kept exact.
func yamlObject(doc []byte) (any, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(j))
}

func readJSON(file string, isYAML bool) (any, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if isYAML {
		return yamlObject(b)
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// dig walks nested maps by key; nil when a step is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// makeStrict makes sch and every schema inside it strict (see schemaSet),
// and gives each list-type map schema the defaults of its keys (from the
// item schema, inline or in defs), which the API server fills in before it
// compares keys. It follows the schema keywords only, so that a property
// named like a keyword is not mistaken for one.
func makeStrict(sch any, defs map[string]any) {
	s, ok := sch.(map[string]any)
	if !ok {
		return
	}
	props, hasProps := s["properties"].(map[string]any)
	_, hasAdditional := s["additionalProperties"]
	preserve, _ := s["x-kubernetes-preserve-unknown-fields"].(bool)
	_, allOf := s["allOf"]
	_, anyOf := s["anyOf"]
	_, oneOf := s["oneOf"]
	if hasProps && !hasAdditional && !preserve && !allOf && !anyOf && !oneOf {
		s["additionalProperties"] = false
	}
	if keys, ok := s["x-kubernetes-list-map-keys"].([]any); ok {
		if d := keyDefaults(s["items"], keys, defs); len(d) > 0 {
			s[listKeyDefaults] = d
		}
	}
	for _, p := range props {
		makeStrict(p, defs)
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		makeStrict(s[k], defs)
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := s[k].([]any)
		for _, x := range list {
			makeStrict(x, defs)
		}
	}
}

// keyDefaults returns the default of each key property of a list's item
// schema that has one.
func keyDefaults(items any, keys []any, defs map[string]any) map[string]any {
	ref, _ := dig(items, "$ref").(string)
	if wrapped, _ := dig(items, "allOf").([]any); ref == "" && len(wrapped) == 1 {
		ref, _ = dig(wrapped[0], "$ref").(string)
	}
	if name, ok := strings.CutPrefix(ref, "#/components/schemas/"); ok {
		items = defs[name]
	}
	out := map[string]any{}
	for _, k := range keys {
		k, _ := k.(string)
		prop, _ := dig(items, "properties", k).(map[string]any)
		if d, ok := prop["default"]; ok {
			out[k] = d
		}
	}
	return out
}

// k8sFormats asserts the OpenAPI formats Kubernetes uses that JSON Schema
// does not define; int-or-string is left to the schema's oneOf.
var k8sFormats = []*jsonschema.Format{
	{Name: "int32", Validate: intRange(math.MinInt32, math.MaxInt32)},
	{Name: "int64", Validate: intRange(math.MinInt64, math.MaxInt64)},
	{Name: "byte", Validate: func(v any) error {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		_, err := base64.StdEncoding.DecodeString(s)
		return err
	}},
}

func intRange(lo, hi int64) func(any) error {
	return func(v any) error {
		n, ok := v.(json.Number)
		if !ok || strings.ContainsAny(string(n), ".eE") {
			return nil // the type keyword judges non-integers
		}
		i, err := n.Int64()
		if err != nil || i < lo || i > hi {
			return fmt.Errorf("%s is out of range [%d, %d]", n, lo, hi)
		}
		return nil
	}
}
