package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/schemacheck"
	"github.com/chaosrun/chaosrun/record"
)

func diffJSON(t *testing.T, base, head *record.Run) []byte {
	t.Helper()
	d, _ := Compare([]*record.Run{base}, []*record.Run{head}, DiffOptions{Iterations: 200})
	b, err := d.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDiffJSONValidates: the diff results of recorded and synthetic runs
// validate against the diff schema, a figure that was zero at base (an
// infinite relative change) and a comparison of nothing included.
func TestDiffJSONValidates(t *testing.T) {
	s := schemacheck.MustGenerate(t, DiffSchema)
	clean := synthRun(t, 1, apisWith(2, 5, 0, 0.5), synthVerdicts)
	other := synthRun(t, 2, apisWith(2, 5, 0, 0.5), synthVerdicts)
	other.Scenario = "another"
	for _, tc := range []struct {
		name       string
		base, head *record.Run
		want       string
	}{
		{"recorded, halved bulkhead", recorded(t, "base1"), recorded(t, "halved1"), `"verdict": "regression"`},
		{"no failures at base", clean, synthRun(t, 4, apisWith(2, 5, 0.10, 0.5), synthVerdicts), `"rel": "+Inf"`},
		{"failures gone", synthRun(t, 4, apisWith(2, 5, 0.10, 0.5), synthVerdicts), clean, `"rel": -1`},
		{"nothing compared", clean, other, `"changes": null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := diffJSON(t, tc.base, tc.head)
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("diff result lacks %s", tc.want)
			}
			if err := s.Validate(b); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestRatioJSON: a relative change reads back as written, infinities
// included.
func TestRatioJSON(t *testing.T) {
	for _, r := range []Ratio{0, -0.5, 1.25, Ratio(math.Inf(1)), Ratio(math.Inf(-1))} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Ratio
		if err := json.Unmarshal(b, &back); err != nil || back != r {
			t.Errorf("%v: wrote %s, read %v (%v)", r, b, back, err)
		}
	}
	var r Ratio
	if err := json.Unmarshal([]byte(`"Infinity"`), &r); err == nil {
		t.Errorf(`read "Infinity" as %v`, r)
	}
}

// TestDiffSchemaRejects: each way a diff result breaks the format fails
// the check.
func TestDiffSchemaRejects(t *testing.T) {
	s := schemacheck.MustGenerate(t, DiffSchema)
	good := diffJSON(t, recorded(t, "base1"), recorded(t, "halved1"))
	change := func(m map[string]any) map[string]any { return m["changes"].([]any)[0].(map[string]any) }
	tests := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"missing changes", func(m map[string]any) { delete(m, "changes") }, "missing property 'changes'"},
		{"missing verdict", func(m map[string]any) { delete(change(m), "verdict") }, "missing property 'verdict'"},
		{"unknown verdict", func(m map[string]any) { change(m)["verdict"] = "worse" }, "value must be one of 'regression'"},
		{"infinity spelt otherwise", func(m map[string]any) { change(m)["rel"] = "Infinity" }, "value must be one of '+Inf', '-Inf'"},
		{"other schema version", func(m map[string]any) { m["schema_version"] = 2 }, "value must be 1"},
		{"options in Go's names", func(m map[string]any) { m["options"].(map[string]any)["Iterations"] = 2000 }, "additional properties 'Iterations' not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.ValidateEdited(good, tc.edit); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
