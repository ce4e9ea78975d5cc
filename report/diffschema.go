package report

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	"github.com/invopop/jsonschema"

	"github.com/chaosrun/chaosrun/internal/schemagen"
)

// diffSources declare the diff result's types, read for the schema's
// descriptions.
//
//go:embed diff.go
var diffSources embed.FS

// DiffSchemaVersion is the version of the diff result's JSON layout.
const DiffSchemaVersion = 1

// DiffSchemaID is the $id of the diff result's JSON Schema.
const DiffSchemaID = "https://github.com/chaosrun/chaosrun/diff/v1.schema.json"

// verdicts are the verdicts a Change may have, in the order tables show
// them.
var verdicts = []string{Regression, WorseInfo, Improvement, NoChange, NotCompared}

// Ratio is a relative change. JSON has no infinities: ±Inf reads and
// writes as the strings "+Inf" and "-Inf".
type Ratio float64

// MarshalJSON writes the ratio as a number, or "+Inf" or "-Inf".
func (r Ratio) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(r), 0) {
		return json.Marshal(ratioText(float64(r)))
	}
	return json.Marshal(float64(r))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Ratio) UnmarshalJSON(b []byte) error {
	for _, inf := range []float64{math.Inf(1), math.Inf(-1)} {
		if string(b) == `"`+ratioText(inf)+`"` {
			*r = Ratio(inf)
			return nil
		}
	}
	return json.Unmarshal(b, (*float64)(r))
}

func ratioText(inf float64) string {
	if inf > 0 {
		return "+Inf"
	}
	return "-Inf"
}

// JSON is the comparison as indented JSON (the diff result, see
// DiffSchema), ending in a newline.
func (d *Diff) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	return append(b, '\n'), nil
}

// DiffSchema returns the JSON Schema (draft 2020-12) of the diff result
// (Diff.JSON, `chaosrun diff --json`), with the types' doc comments as
// descriptions.
func DiffSchema() ([]byte, error) {
	return schemagen.Generate(schemagen.Spec{
		Root:    &Diff{},
		ID:      DiffSchemaID,
		Title:   "chaosrun diff result",
		Sources: diffSources,
		Nulls:   true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t != reflect.TypeFor[Ratio]() {
				return nil
			}
			return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
				{Type: "number"},
				{Type: "string", Enum: []any{ratioText(1), ratioText(-1)}},
			}}
		},
		Const: map[string]any{"Diff.schema_version": DiffSchemaVersion},
		Enum:  map[string][]string{"Change.verdict": verdicts},
	})
}
