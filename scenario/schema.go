package scenario

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
)

// modelSources are the model's sources, read for the schema's descriptions.
//
//go:embed model.go workload.go workload_k6.go
var modelSources embed.FS

// SchemaID is the $id of the scenario JSON Schema.
const SchemaID = "https://github.com/chaosrun/chaosrun/scenario/v1.schema.json"

// durationPattern matches what time.ParseDuration accepts, without a sign.
const durationPattern = `^(0|([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))+$`

// Schema returns the JSON Schema (draft 2020-12) of scenario files, with
// the model's doc comments as descriptions, for editors.
func Schema() ([]byte, error) {
	comments, err := modelComments()
	if err != nil {
		return nil, fmt.Errorf("scenario: schema: %w", err)
	}
	r := &jsonschema.Reflector{
		FieldNameTag: "yaml",
		Mapper:       schemaFor,
		LookupComment: func(t reflect.Type, field string) string {
			if t.PkgPath() != durationType.PkgPath() {
				return ""
			}
			if field == "" {
				return comments[t.Name()]
			}
			return comments[t.Name()+"."+field]
		},
	}
	s := r.Reflect(&Scenario{})
	s.ID = SchemaID
	s.Title = "chaosrun scenario"
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("scenario: schema: %w", err)
	}
	return buf.Bytes(), nil
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

// modelComments reads the doc comments of the model's types ("Type") and
// struct fields ("Type.Field").
func modelComments() (map[string]string, error) {
	out := map[string]string{}
	for _, name := range []string{"model.go", "workload.go", "workload_k6.go"} {
		src, err := modelSources.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		addComments(out, f)
	}
	return out, nil
}

// addComments adds a file's type and field doc comments to out.
func addComments(out map[string]string, f *ast.File) {
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, spec := range g.Specs {
			ts := spec.(*ast.TypeSpec)
			text := ts.Doc.Text()
			if text == "" {
				text = g.Doc.Text()
			}
			out[ts.Name.Name] = new(doc.Package).Synopsis(text)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, fl := range st.Fields.List {
				c := strings.Join(strings.Fields(fl.Doc.Text()), " ")
				for _, n := range fl.Names {
					if c != "" {
						out[ts.Name.Name+"."+n.Name] = c
					}
				}
			}
		}
	}
}
