package record

import (
	"embed"
	"reflect"

	"github.com/invopop/jsonschema"

	"github.com/chaosrun/chaosrun/internal/schemagen"
)

// sources are the record's type declarations, read for the schema's
// descriptions.
//
//go:embed record.go outcome.go
var sources embed.FS

// SchemaID is the $id of the run record's JSON Schema.
const SchemaID = "https://github.com/chaosrun/chaosrun/run-record/v1.schema.json"

// Schema returns the JSON Schema (draft 2020-12) of run.json as WriteJSON
// writes it, with the types' doc comments as descriptions.
func Schema() ([]byte, error) {
	return schemagen.Generate(schemagen.Spec{
		Root:    &Run{},
		ID:      SchemaID,
		Title:   "chaosrun run record",
		Sources: sources,
		Mapper:  schemaFor,
		Nulls:   true,
		Const:   map[string]any{"Run.schema_version": SchemaVersion},
		Enum:    map[string][]string{"Verdict.source": {SourceScript, SourceRun}},
	})
}

// schemaFor maps the types whose JSON form differs from their Go form, and
// the closed sets of strings.
func schemaFor(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[Duration]():
		return &jsonschema.Schema{
			Type:     "string",
			Pattern:  "^-?" + schemagen.DurationPattern[1:],
			Examples: []any{"1.5s", "350ms", "1m0.06s"},
		}
	case reflect.TypeFor[Kind]():
		return &jsonschema.Schema{Type: "string", Enum: []any{Trend, Counter, Rate, Gauge}}
	case reflect.TypeFor[FaultAction]():
		return &jsonschema.Schema{Type: "string", Enum: []any{Applied, Reverted, Failed}}
	}
	return nil
}
