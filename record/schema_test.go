package record

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/schemacheck"
)

// fullRun is sampleRun with every optional field set, the newest included.
func fullRun(t *testing.T) *Run {
	r := sampleRun(t, 3)
	r.Incomplete = true
	r.Aborted = `abortOnFail: fast: "p(99) < 10ms" failed at +2s`
	r.NotApplied = []NotApplied{{Fault: "late", Kind: "stop", Target: "vault", Start: Duration(50 * time.Second), Reason: "load ended before its start"}}
	r.LoadParts = []LoadPart{{Name: "k6 shard 2 of 3", ExitCode: 99, ThresholdsCrossed: true, PID: 4242,
		Crossed: []Threshold{{Key: "http_req_failed", Expr: "rate<0.01"}}, Ran: Duration(3 * time.Second)}}
	r.ScriptChecks = []ScriptCheck{{Assertion: "threshold http_req_failed", Metric: "http_req_failed", Window: "all", Check: "rate<0.01",
		AbortOnFail: true, DelayAbortEval: Duration(10 * time.Second)}}
	r.Verdicts = append(r.Verdicts,
		Verdict{Assertion: "threshold http_req_failed", Check: "rate<0.01", Metric: "http_req_failed", Window: "all", Source: SourceScript},
		Verdict{Assertion: "load ran its planned duration", Check: "duration >= 3s", Window: "all", From: Duration(-time.Millisecond), Source: SourceRun, Error: "ended early"})
	r.Faults = append(r.Faults, FaultEvent{Fault: "late", Kind: "stop", Target: "vault", Action: Failed, Error: "no such host"})
	return r
}

func encoded(t *testing.T, r *Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := EncodeJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSchemaAcceptsWrittenRecords: what EncodeJSON writes validates,
// every optional field set or none (nil slices are written as null).
func TestSchemaAcceptsWrittenRecords(t *testing.T) {
	s := schemacheck.MustGenerate(t, Schema)
	bare := &Run{SchemaVersion: SchemaVersion, Scenario: "bare", Testbed: "fake", Start: t0, End: t0}
	for name, r := range map[string]*Run{"full": fullRun(t), "sample": sampleRun(t, 2), "bare": bare} {
		if err := s.Validate(encoded(t, r)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSchemaRejects: each way a record breaks the format fails the check.
func TestSchemaRejects(t *testing.T) {
	s := schemacheck.MustGenerate(t, Schema)
	good := encoded(t, fullRun(t))
	tests := []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"missing seed", func(m map[string]any) { delete(m, "seed") }, "missing property 'seed'"},
		{"missing series count", func(m map[string]any) { delete(series(m), "count") }, "missing property 'count'"},
		{"wrong metric kind", func(m map[string]any) { series(m)["kind"] = "histogram" }, "value must be one of 'trend', 'counter', 'rate', 'gauge'"},
		{"wrong fault action", func(m map[string]any) { at(m, "faults", 0)["action"] = "paused" }, "value must be one of"},
		{"other schema version", func(m map[string]any) { m["schema_version"] = 2 }, "value must be 1"},
		{"unknown field", func(m map[string]any) { m["verdict"] = "pass" }, "additional properties 'verdict' not allowed"},
		{"duration without unit", func(m map[string]any) { m["planned"] = "30" }, "does not match pattern"},
		{"time not RFC 3339", func(m map[string]any) { m["start"] = "yesterday" }, "is not valid date-time"},
		{"unknown verdict source", func(m map[string]any) { at(m, "verdicts", 1)["source"] = "scenario" }, "value must be one of 'script', 'run'"},
		{"load part without exit code", func(m map[string]any) { delete(at(m, "load_parts", 0), "exit_code") }, "missing property 'exit_code'"},
		{"script check without its check", func(m map[string]any) { delete(at(m, "script_checks", 0), "check") }, "missing property 'check'"},
		{"not-applied fault without reason", func(m map[string]any) { delete(at(m, "not_applied", 0), "reason") }, "missing property 'reason'"},
		{"aborted not a string", func(m map[string]any) { m["aborted"] = true }, "got boolean, want string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.ValidateEdited(good, tc.edit); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func at(m map[string]any, key string, i int) map[string]any {
	return m[key].([]any)[i].(map[string]any)
}

func series(m map[string]any) map[string]any {
	return at(at(m, "windows", 0), "series", 0)
}

// TestSchemaValidatesTestdataRecords: every run record kept in the
// repository's test data validates.
func TestSchemaValidatesTestdataRecords(t *testing.T) {
	s := schemacheck.MustGenerate(t, Schema)
	var found []string
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir() || filepath.Ext(p) != ".json" || !slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "testdata"):
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var head map[string]json.RawMessage
		if json.Unmarshal(b, &head) != nil || head["schema_version"] == nil || head["windows"] == nil {
			return nil
		}
		found = append(found, p)
		if err := s.Validate(b); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d run records in test data: %v", len(found), found)
	for _, want := range []string{"../report/testdata/runs/base1.json", "../export/metrics/testdata/bank-outlier-host-off.json"} {
		if !slices.Contains(found, filepath.FromSlash(want)) {
			t.Errorf("the walk did not find %s", want)
		}
	}
}
