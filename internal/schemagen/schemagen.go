// Package schemagen generates the JSON Schemas (draft 2020-12) of Go
// types, with the types' doc comments as descriptions: the scenario file,
// the run record and the diff result are each described by the types that
// read and write them.
package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
)

// DurationPattern matches a Go duration string as time.ParseDuration
// reads it, without a sign.
const DurationPattern = `^(0|([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))+$`

// Spec says what to generate.
type Spec struct {
	// Root is a pointer to a value of the root type.
	Root      any
	ID, Title string
	// Sources holds the Go files (*.go at its root) whose doc comments of
	// types and struct fields describe the root type's package.
	Sources fs.FS
	// FieldNameTag is the struct tag that names properties (default json).
	FieldNameTag string
	// Mapper gives the schema of the types whose encoded form differs from
	// their Go form, and nil for the others.
	Mapper func(reflect.Type) *jsonschema.Schema
	// Nulls lets the properties that encoding/json writes as null when
	// empty (slices and maps without omitempty) be null.
	Nulls bool
	// Const fixes properties to one value and Enum to a set of strings,
	// each keyed "Type.property" (for plain types the Go type leaves open).
	Const map[string]any
	Enum  map[string][]string
}

// Generate returns the schema sp describes as indented JSON. Struct types
// allow no properties beyond their fields; fields without omitempty are
// required.
func Generate(sp Spec) ([]byte, error) {
	root := reflect.TypeOf(sp.Root)
	for root.Kind() == reflect.Pointer {
		root = root.Elem()
	}
	comments, err := Comments(sp.Sources)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", root, err)
	}
	r := &jsonschema.Reflector{
		FieldNameTag: sp.FieldNameTag,
		Mapper:       sp.Mapper,
		LookupComment: func(t reflect.Type, field string) string {
			if t.PkgPath() != root.PkgPath() {
				return ""
			}
			if field == "" {
				return comments[t.Name()]
			}
			return comments[t.Name()+"."+field]
		},
	}
	s := r.ReflectFromType(root)
	s.ID = jsonschema.ID(sp.ID)
	s.Title = sp.Title
	if sp.Nulls {
		allowNulls(s.Definitions, root, map[reflect.Type]bool{})
	}
	if err := restrict(s, sp); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", root, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", root, err)
	}
	return buf.Bytes(), nil
}

// restrict applies sp's Const and Enum. A key that names nothing is an
// error, so a renamed field breaks the generation rather than loosening
// the schema.
func restrict(s *jsonschema.Schema, sp Spec) error {
	for key, v := range sp.Const {
		p, err := property(s, key)
		if err != nil {
			return err
		}
		p.Const = v
	}
	for key, vs := range sp.Enum {
		p, err := property(s, key)
		if err != nil {
			return err
		}
		for _, v := range vs {
			p.Enum = append(p.Enum, v)
		}
	}
	return nil
}

// property is the schema of the property key ("Type.property") names.
func property(s *jsonschema.Schema, key string) (*jsonschema.Schema, error) {
	def, prop, _ := strings.Cut(key, ".")
	d, ok := s.Definitions[def]
	if !ok || d.Properties == nil {
		return nil, fmt.Errorf("%s: no definition %s", key, def)
	}
	p, ok := d.Properties.Get(prop)
	if !ok {
		return nil, fmt.Errorf("%s: %s has no property %s", key, def, prop)
	}
	return p, nil
}

// allowNulls walks the struct types reachable from t and lets each
// property that encoding/json writes as null when empty be null.
func allowNulls(defs jsonschema.Definitions, t reflect.Type, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	def := defs[t.Name()]
	if t.Kind() != reflect.Struct || seen[t] || def == nil {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		allowNulls(defs, f.Type, seen)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		k := f.Type.Kind()
		if k != reflect.Slice && k != reflect.Map ||
			slices.ContainsFunc(strings.Split(opts, ","), func(o string) bool { return o == "omitempty" || o == "omitzero" }) {
			continue
		}
		if p, ok := def.Properties.Get(name); ok {
			desc := p.Description
			p.Description = ""
			def.Properties.Set(name, &jsonschema.Schema{AnyOf: []*jsonschema.Schema{p, {Type: "null"}}, Description: desc})
		}
	}
}

// Comments reads the doc comments of the types ("Type": its synopsis) and
// struct fields ("Type.Field") declared in the *.go files at the root of
// fsys.
func Comments(fsys fs.FS) (map[string]string, error) {
	names, err := fs.Glob(fsys, "*.go")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range names {
		src, err := fs.ReadFile(fsys, name)
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
