package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chaosrun/chaosrun/internal/schemacheck"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
)

var update = flag.Bool("update", false, "rewrite docs/schema/*.json from the generated schemas")

// The generated schemas, compiled once per test process.
var (
	recordSchema = sync.OnceValues(func() (*schemacheck.Schema, error) { return schemacheck.Generated(record.Schema) })
	diffSchema   = sync.OnceValues(func() (*schemacheck.Schema, error) { return schemacheck.Generated(report.DiffSchema) })
)

// checkSchema validates JSON against one of the schemas above.
func checkSchema(schema func() (*schemacheck.Schema, error), b []byte) error {
	s, err := schema()
	if err != nil {
		return err
	}
	return s.Validate(b)
}

// TestSchemaCommand: `chaosrun schema` prints the scenario schema, with
// --record and --diff the run record's and the diff result's, which the
// repository keeps in docs/schema (-update rewrites them).
func TestSchemaCommand(t *testing.T) {
	for _, tc := range []struct{ flag, file string }{
		{"", "../../scenario/testdata/scenario.schema.json"},
		{"--record", "../../docs/schema/run-record.json"},
		{"--diff", "../../docs/schema/diff.json"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			args := []string{"schema"}
			if tc.flag != "" {
				args = append(args, tc.flag)
			}
			code, stdout, stderr := runCLI(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if *update && tc.flag != "" {
				if err := os.MkdirAll(filepath.Dir(tc.file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(tc.file, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if stdout != string(want) {
				t.Errorf("chaosrun %s differs from %s (go test ./cmd/chaosrun -run TestSchemaCommand -update rewrites it)", strings.Join(args, " "), tc.file)
			}
		})
	}
	if code, _, stderr := runCLI(t, "schema", "--record", "--diff"); code != exitUsage || !strings.Contains(stderr, "none of the others can be") {
		t.Errorf("--record --diff: exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
	}
}

// TestRecordSchemaCheckFails: the check every test's readRecord makes
// refuses a record missing a required field or with a wrong metric kind.
func TestRecordSchemaCheckFails(t *testing.T) {
	b, err := os.ReadFile("../../report/testdata/runs/base1.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSchema(recordSchema, b); err != nil {
		t.Fatalf("a recorded run: %v", err)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(m map[string]any)
	}{
		{"no scenario", "missing property 'scenario'", func(m map[string]any) { delete(m, "scenario") }},
		{"wrong kind", "value must be one of 'trend'", func(m map[string]any) {
			w := m["windows"].([]any)[0].(map[string]any)
			w["series"].([]any)[0].(map[string]any)["kind"] = "summary"
		}},
	} {
		s, err := recordSchema()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ValidateEdited(b, tc.edit); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}
