// Package schemacheck validates JSON documents against the JSON Schemas
// chaosrun generates (draft 2020-12, formats asserted), for tests.
package schemacheck

import (
	"bytes"
	"fmt"

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

// Validate checks the JSON document doc against s; the error lists every
// place where doc breaks the schema.
func (s *Schema) Validate(doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.s.Validate(v)
}
