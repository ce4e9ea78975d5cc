package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/runner/loadtest"
)

// TestLogLevel: --log-level chooses which of the harness's own
// diagnostics reach stderr: none at the default (warn) for a run that
// holds, the run's life and its problems at info; a level that does not
// exist is a usage error that lists those that do.
func TestLogLevel(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		load      *loadtest.Load
		code      int
		want, not []string
	}{
		{"default", nil, &loadtest.Load{Windows: tenRequests(), RunFor: 10 * time.Millisecond}, exitOK,
			nil, []string{"level=INFO", "level=WARN", "level=DEBUG"}},
		{"info", []string{"--log-level", "info"}, &loadtest.Load{Windows: tenRequests(), RunFor: 10 * time.Millisecond}, exitOK,
			[]string{`level=INFO msg="testbed up" scenario=fake-load`, `msg="load started"`, `msg="load ended"`, `msg="testbed down"`}, []string{"level=DEBUG"}},
		{"a problem at info", []string{"--log-level", "info"}, &loadtest.Load{Windows: tenRequests(), RunFor: 10 * time.Millisecond, Err: errors.New("k6: exited with code 107")}, exitRunError,
			[]string{`level=INFO msg="run incomplete" scenario=fake-load problem="k6: exited with code 107"`}, nil},
		{"no such level", []string{"--log-level", "verbose"}, &loadtest.Load{}, exitUsage,
			[]string{`--log-level "verbose": want one of debug, info, warn, error`}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, _, se := fakeState(t, tc.load, &loadtest.Testbed{})
			file := writeScenario(t, strings.Replace(fakeLoadScenario, "%s", "5", 1))
			code := Execute(context.Background(), st, append([]string{"run", "--quiet", file}, tc.args...))
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, se)
			}
			for _, w := range tc.want {
				if !strings.Contains(se.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, se)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(se.String(), n) {
					t.Errorf("stderr has %q:\n%s", n, se)
				}
			}
		})
	}
}
