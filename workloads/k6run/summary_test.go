package k6run

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCrossedThresholds reads which thresholds k6 v1.8.1 found crossed
// from its --summary-export (testdata: a real one, of a script with four
// thresholds, two of them crossed; true marks a crossed one).
func TestCrossedThresholds(t *testing.T) {
	got, err := CrossedThresholds(filepath.Join("testdata", "summary-export.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Threshold{{Key: "my_trend", Expr: "p(95)<10"}, {Key: "my_trend{kind:a}", Expr: "avg<1"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("crossed %+v, want %+v", got, want)
	}
	bad := filepath.Join(t.TempDir(), "summary.json")
	if err := os.WriteFile(bad, []byte(`{"metrics": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CrossedThresholds(bad); err == nil || !strings.Contains(err.Error(), "summary.json") {
		t.Errorf("a cut summary: %v, want an error naming it", err)
	}
	if _, err := CrossedThresholds(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing summary: no error")
	}
}
