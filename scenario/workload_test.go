package scenario

import (
	"path/filepath"
	"testing"
	"time"
)

// TestCatalogEngines checks that every catalog scenario runs either its k6
// script on k6 or its streams on the native engine, and that the k6 copies
// (scenarios/k6) run on k6.
func TestCatalogEngines(t *testing.T) {
	files, _ := filepath.Glob("../scenarios/*.yaml")
	examples, _ := filepath.Glob("../scenarios/examples/*.yaml")
	k6, _ := filepath.Glob("../scenarios/k6/*.yaml")
	if len(files) == 0 || len(examples) == 0 || len(k6) == 0 {
		t.Fatal("no catalog")
	}
	for _, f := range k6 {
		if s, err := Load(f, Options{}); err != nil || s.Workload.Engine != EngineK6 {
			t.Errorf("%s: a k6 copy that does not run on k6 (%v)", f, err)
		}
	}
	for _, f := range append(append(files, examples...), k6...) {
		s, err := Load(f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w := s.Workload
		switch {
		case w.Script != "" && (w.Engine != EngineK6 || len(w.Streams) != 0):
			t.Errorf("%s: script %s on engine %q", f, w.Script, w.Engine)
		case w.Script == "" && (w.Engine != EngineNative || len(w.Streams) == 0 || len(w.Targets) == 0):
			t.Errorf("%s: no script, engine %q, %d streams, targets %v", f, w.Engine, len(w.Streams), w.Targets)
		}
	}
}

// TestArrivalProfiles checks each schedule's profile against the load.
func TestArrivalProfiles(t *testing.T) {
	s, err := Load("testdata/good/native.yaml", testOptions)
	if err != nil {
		t.Fatal(err)
	}
	load := s.Workload.Duration.Std()
	for name, want := range map[string]struct {
		at   time.Duration
		rate float64
	}{
		"check":    {5 * time.Second, 100},
		"cash":     {5 * time.Second, 20},
		"read":     {8 * time.Second, 200},
		"overload": {15 * time.Second, 300},
		"flood":    {5 * time.Second, 0},
	} {
		p, err := s.Workload.Streams[name].Arrival.Profile(load)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.RateAt(want.at); got != want.rate || p.End() > load {
			t.Errorf("%s: rate at %s = %v (want %v), ends %s", name, want.at, got, want.rate, p.End())
		}
	}
	if got := s.Workload.StreamOrder; len(got) != 5 || got[0] != "check" || got[4] != "flood" {
		t.Errorf("stream order %v", got)
	}
}
