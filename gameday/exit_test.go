package gameday

import (
	"errors"
	"fmt"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/record"
)

// TestVerdictExit: the game day's exit code follows its verdict, whatever
// ended it (Stop, Ctrl-C once load ran, a guard, the load's end).
func TestVerdictExit(t *testing.T) {
	pass := []record.Verdict{{Assertion: "a", Pass: true}}
	breach := []record.Verdict{{Assertion: "a", Pass: true}, {Assertion: "b"}}
	for _, tc := range []struct {
		name       string
		rec        *record.Run
		rerr, werr error
		code       int
	}{
		{"pass", &record.Run{Verdicts: pass}, nil, nil, exitcode.OK},
		{"breach", &record.Run{Verdicts: breach}, nil, nil, exitcode.Breach},
		{"guard stop breaches", &record.Run{Verdicts: breach, Aborted: "stop condition b"}, nil, nil, exitcode.Breach},
		{"incomplete", &record.Run{Verdicts: pass, Incomplete: true, Problems: []string{"svc exited"}}, nil, nil, exitcode.RunError},
		{"interrupted while starting", &record.Run{Incomplete: true}, fmt.Errorf("testbed: %w", ErrInterrupted), nil, exitcode.Interrupted},
		{"harness error", &record.Run{Incomplete: true}, errors.New("k6 exited"), nil, exitcode.RunError},
		{"record not written", &record.Run{Verdicts: pass}, nil, errors.New("disk full"), exitcode.RunError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verdictExit("day", tc.rec, tc.rerr, tc.werr)
			code := exitcode.OK
			if err != nil {
				c, ok := exitcode.As(err)
				if !ok {
					t.Fatalf("error %v carries no exit code", err)
				}
				code = c.Code
			}
			if code != tc.code {
				t.Errorf("exit %d (%v), want %d", code, err, tc.code)
			}
		})
	}
}
