package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
