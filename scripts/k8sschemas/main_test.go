package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestPruneSpec keeps the component schemas whole but for their
// descriptions, and drops the paths; a property named "description" stays.
func TestPruneSpec(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "in.json"), filepath.Join(dir, "out", "out.json")
	in := `{"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "unversioned"},
		"paths": {"/api/v1/namespaces": {"get": {}}},
		"components": {"schemas": {"X": {"description": "an X", "type": "object", "required": ["description"],
			"properties": {
				"description": {"description": "the field named description", "type": "string"},
				"list": {"type": "array", "items": {"description": "item", "allOf": [{"$ref": "#/components/schemas/Y", "description": "y"}]}},
				"map": {"type": "object", "additionalProperties": {"description": "value", "type": "string"}}}}}}}`
	if err := os.WriteFile(src, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pruneSpec(src, dst); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(`{"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "unversioned"},
		"components": {"schemas": {"X": {"type": "object", "required": ["description"],
			"properties": {
				"description": {"type": "string"},
				"list": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/Y"}]}},
				"map": {"type": "object", "additionalProperties": {"type": "string"}}}}}}}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pruned:\n%s", b)
	}
	if err := os.WriteFile(src, []byte(`{"openapi": "3.0.0", "paths": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pruneSpec(src, dst); err == nil {
		t.Fatal("a spec without component schemas was pruned")
	}
}
