package scenario

import (
	"embed"
	"reflect"

	"github.com/invopop/jsonschema"

	"github.com/chaosrun/chaosrun/internal/schemagen"
)

// modelSources are the model's sources, read for the schema's descriptions.
//
//go:embed model.go workload.go workload_k6.go
var modelSources embed.FS

// SchemaID is the $id of the scenario JSON Schema.
const SchemaID = "https://github.com/chaosrun/chaosrun/scenario/v1.schema.json"

// durationPattern matches what time.ParseDuration accepts, without a sign.
const durationPattern = schemagen.DurationPattern

// Schema returns the JSON Schema (draft 2020-12) of scenario files, with
// the model's doc comments as descriptions, for editors.
func Schema() ([]byte, error) {
	return schemagen.Generate(schemagen.Spec{
		Root:         &Scenario{},
		ID:           SchemaID,
		Title:        "chaosrun scenario",
		Sources:      modelSources,
		FieldNameTag: "yaml",
		Mapper:       schemaFor,
	})
}

// schemaFor maps the types whose YAML form differs from their Go form.
func schemaFor(t reflect.Type) *jsonschema.Schema {
	switch {
	case t == reflect.TypeFor[Health]():
		return &jsonschema.Schema{
			AnyOf: []*jsonschema.Schema{
				{Type: "string", Pattern: "^(/.*|tcp)$"},
				{Type: "array", Items: &jsonschema.Schema{Type: "string"}, MinItems: ptr(uint64(1))},
			},
			Description: "An HTTP path (default /healthz), tcp, or a command as a list (ready when it exits 0).",
			Examples:    []any{"/healthz", "tcp", []string{"redis-cli", "-p", "{port}", "ping"}},
		}
	case t == reflect.TypeFor[Files]():
		return &jsonschema.Schema{
			AnyOf: []*jsonschema.Schema{
				{Type: "string"},
				{Type: "array", Items: &jsonschema.Schema{Type: "string"}, MinItems: ptr(uint64(1))},
			},
			Description: "A Compose file, or several merged in order as docker compose -f a -f b merges them.",
			Examples:    []any{"compose.yaml", []string{"compose.yaml", "compose.chaos.yaml"}},
		}
	case t == reflect.TypeFor[Check]():
		return checkSchema()
	case t == durationType:
		return &jsonschema.Schema{
			Type:        "string",
			Pattern:     durationPattern,
			Description: "A duration with a unit, like 20s, 500ms or 1m30s.",
			Examples:    []any{"20s", "1m30s"},
		}
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String:
		// config and params keep the text of any scalar.
		return &jsonschema.Schema{
			Type: "object",
			AdditionalProperties: &jsonschema.Schema{
				AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "number"}, {Type: "boolean"}},
			},
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// checkSchema is a check: an expression, or k6's object form.
func checkSchema() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set("threshold", &jsonschema.Schema{Type: "string", MinLength: ptr(uint64(1))})
	props.Set("abortOnFail", &jsonschema.Schema{Type: "boolean"})
	props.Set("delayAbortEval", &jsonschema.Schema{Type: "string", Pattern: durationPattern})
	return &jsonschema.Schema{
		AnyOf: []*jsonschema.Schema{
			{Type: "string", MinLength: ptr(uint64(1))},
			{Type: "object", Properties: props, Required: []string{"threshold"}, AdditionalProperties: jsonschema.FalseSchema},
		},
		Description: "A threshold expression in k6's grammar, or k6's object form that may stop the run when the check fails.",
		Examples:    []any{"p(99) < 250ms", map[string]any{"threshold": "p(99) < 1s", "abortOnFail": true, "delayAbortEval": "10s"}},
	}
}
