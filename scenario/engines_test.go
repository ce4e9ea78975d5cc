package scenario

import (
	"strings"
	"testing"
)

// TestRegisteredEngineValidates: workload.engine may name an engine only
// once it is registered; its workload is then checked as its shape says
// (an engine of its own shape: the duration only).
func TestRegisteredEngineValidates(t *testing.T) {
	const doc = `version: 1
name: toy-run
services:
  api: {run: itemsapi}
workload:
  engine: toy-of-the-test
  duration: 5s
assertions:
  - name: some
    metric: http_reqs
    checks: ["count > 0"]
`
	_, err := Parse("toy.yaml", []byte(doc), Options{})
	if err == nil || !strings.Contains(err.Error(), `toy.yaml:6:11: workload.engine: unknown engine "toy-of-the-test" (allowed: k6, native)`) {
		t.Fatalf("before registering: %v", err)
	}
	RegisterEngine("toy-of-the-test", ShapeOwn)
	t.Cleanup(func() {
		enginesMu.Lock()
		delete(engines, "toy-of-the-test")
		enginesMu.Unlock()
	})
	sc, err := Parse("toy.yaml", []byte(doc), Options{})
	if err != nil {
		t.Fatalf("after registering: %v", err)
	}
	if sc.Workload.EngineName() != "toy-of-the-test" || len(sc.Workload.StreamOrder) != 0 {
		t.Errorf("workload %+v", sc.Workload)
	}
	if names := EngineNames(); strings.Join(names, ",") != "k6,native,toy-of-the-test" {
		t.Errorf("engines %v", names)
	}
}

func TestRegisterEngineRefusesAnotherShape(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("k6 re-registered with the streams shape did not panic")
		}
	}()
	RegisterEngine(EngineK6, ShapeStreams)
}
