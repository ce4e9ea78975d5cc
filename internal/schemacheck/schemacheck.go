// Package schemacheck validates JSON documents against the JSON Schemas
// chaosrun generates (draft 2020-12, formats asserted), for tests.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled JSON Schema.
type Schema struct{ s *jsonschema.Schema }

// Compile compiles a schema document. Formats (date-time, …) are asserted,
// not only annotations.
func Compile(doc []byte) (*Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const loc = "mem:///schema.json"
	if err := c.AddResource(loc, v); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return &Schema{s}, nil
}

// Generated compiles the schema gen generates.
func Generated(gen func() ([]byte, error)) (*Schema, error) {
	doc, err := gen()
	if err != nil {
		return nil, err
	}
	return Compile(doc)
}

// MustGenerate compiles the schema gen generates, or fails the test.
func MustGenerate(t testing.TB, gen func() ([]byte, error)) *Schema {
	t.Helper()
	s, err := Generated(gen)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Validate checks the JSON document doc against s; the error lists every
// place where doc breaks the schema.
func (s *Schema) Validate(doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.s.Validate(v)
}

// ValidateEdited validates doc (a JSON object) once edit has changed its
// decoded form: how a test shows that a broken document fails the check.
func (s *Schema) ValidateEdited(doc []byte, edit func(map[string]any)) error {
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.Validate(b)
}
