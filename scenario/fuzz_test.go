package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/models/arrival"
)

// FuzzParse checks that any input yields either a valid scenario or
// positioned errors, never a panic, and that a parsed scenario is usable.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data, testOptions)
		if err != nil {
			if s != nil {
				t.Fatalf("got a scenario and an error: %v", err)
			}
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error is %T, not Errors: %v", err, err)
			}
			for _, e := range errs {
				if e.File != "fuzz.yaml" || e.Msg == "" {
					t.Fatalf("error without file or message: %#v", e)
				}
			}
			return
		}
		if s == nil {
			t.Fatal("no scenario and no error")
		}
		// What the testbed and fault schedule call must work on it.
		for _, e := range s.Edges() {
			if _, err := s.ProxiesFor(e.From + "->" + e.To); err != nil {
				t.Fatalf("edge %s: %v", e.Proxy, err)
			}
		}
		for _, fault := range s.Faults {
			if fault.Host != "" {
				if _, err := s.InstancesFor(fault.Host); err != nil {
					t.Fatalf("fault %s: %v", fault.Name, err)
				}
				continue
			}
			if _, err := s.ProxiesFor(fault.Edge); err != nil {
				t.Fatalf("fault %s: %v", fault.Name, err)
			}
		}
		if got := len(s.StartOrder()); got != len(s.Services) {
			t.Fatalf("StartOrder has %d services, want %d", got, len(s.Services))
		}
		if err := Validate(s, testOptions); err != nil {
			t.Fatalf("a parsed scenario does not validate again: %v", err)
		}
	})
}

// workloadHead is the scenario FuzzWorkload puts each workload under.
const workloadHead = `version: 1
name: fuzz
services:
  bank: {run: bankservice}
  kv: {run: kvdispatcher, replicas: 2}
workload:
`

// FuzzWorkload checks the workload decoder and validator on any workload
// section: positioned errors or a workload whose streams' schedules and
// templates are usable, never a panic.
func FuzzWorkload(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/native*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if _, w, ok := strings.Cut(string(data), "\nworkload:\n"); ok {
			w, _, _ = strings.Cut(w, "\nassertions:")
			f.Add([]byte(w))
		}
	}
	f.Add([]byte("  duration: 10s\n  streams:\n    a: {target: bank, path: /{k}, arrival: {rate: 5}, keys: {k: {kind: zipf}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", append([]byte(workloadHead), data...), testOptions)
		if err != nil {
			var errs Errors
			if s != nil || !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("want Errors and no scenario, got %T %v", err, err)
			}
			return
		}
		w := s.Workload
		for _, name := range w.StreamOrder {
			st := w.Streams[name]
			prof, err := st.Arrival.Profile(w.Duration.Std())
			if err != nil {
				t.Fatalf("stream %s: a valid arrival gives no profile: %v", name, err)
			}
			if _, err := arrival.NewSchedule(prof); err != nil {
				t.Fatalf("stream %s: %v", name, err)
			}
			if prof.End() > w.Duration.Std() {
				t.Fatalf("stream %s ends at %s, after the load", name, prof.End())
			}
			for _, k := range st.Keys {
				if k.Kind != "bot" {
					if err := k.Config(1).Validate(); err != nil {
						t.Fatalf("stream %s: a valid key stream: %v", name, err)
					}
				}
			}
			if st.Client != nil {
				if err := st.Client.Config().Validate(); err != nil {
					t.Fatalf("stream %s: a valid client: %v", name, err)
				}
			}
			ParseTemplate(st.Path + st.Body)
		}
		if err := Validate(s, testOptions); err != nil {
			t.Fatalf("a parsed scenario does not validate again: %v", err)
		}
	})
}
