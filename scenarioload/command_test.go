package scenarioload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/scenario"
)

// TestCommandEnds: what a command that loads scenarios ends with — the
// scenarios, or exit 2 with the problems said, or 130 once interrupted.
func TestCommandEnds(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("version: 1\nname: bad\n"), 0o644)
	live := context.Background()
	ended, cancel := context.WithCancel(live)
	cancel()
	l := loader(t, dir)
	for _, tc := range []struct {
		name   string
		load   func(ctx context.Context, stderr *bytes.Buffer) (int, error)
		ctx    context.Context
		code   int
		n      int
		stderr string
	}{
		{name: "one from the catalog", ctx: live, n: 1, load: func(ctx context.Context, se *bytes.Buffer) (int, error) {
			sc, err := l.Scenario(ctx, "catalog:bank-slow-vault", nil, se)
			return count(sc != nil), err
		}},
		{name: "a wrong one is said, exit 2", ctx: live, code: exitcode.Usage, stderr: "bad.yaml", load: func(ctx context.Context, se *bytes.Buffer) (int, error) {
			sc, err := l.Scenario(ctx, "bad.yaml", nil, se)
			return count(sc != nil), err
		}},
		{name: "interrupted, 130", ctx: ended, code: exitcode.Interrupted, load: func(ctx context.Context, se *bytes.Buffer) (int, error) {
			sc, err := l.Scenario(ctx, "bad.yaml", nil, se)
			return count(sc != nil), err
		}},
		{name: "all of the catalog", ctx: live, n: 2, load: func(ctx context.Context, se *bytes.Buffer) (int, error) {
			scs, err := l.Scenarios(ctx, nil, nil, []string{"catalog:bank-slow-vault", "catalog:kv-scan-quota"}, se, nil)
			return len(scs), err
		}},
		{name: "one wrong of many, exit 2", ctx: live, code: exitcode.Usage, stderr: "bad.yaml", load: func(ctx context.Context, se *bytes.Buffer) (int, error) {
			scs, err := l.Scenarios(ctx, nil, nil, []string{"catalog:bank-slow-vault", "bad.yaml"}, se, nil)
			return len(scs), err
		}},
		{name: "a missing file, exit 2", ctx: live, code: exitcode.Usage, load: func(ctx context.Context, se *bytes.Buffer) (int, error) {
			scs, err := l.Scenarios(ctx, nil, nil, []string{"missing.yaml"}, se, nil)
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a missing file: %v", err)
			}
			return len(scs), err
		}},
		{name: "many, interrupted, 130", ctx: ended, code: exitcode.Interrupted, load: func(ctx context.Context, se *bytes.Buffer) (int, error) {
			scs, err := l.Scenarios(ctx, nil, nil, []string{"bad.yaml"}, se, func(string, *scenario.Scenario) { t.Error("ok heard of a scenario") })
			return len(scs), err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			n, err := tc.load(tc.ctx, &stderr)
			code := exitcode.OK
			if ee, ok := exitcode.As(err); ok {
				code = ee.Code
			} else if err != nil {
				t.Fatalf("an error without an exit code: %v", err)
			}
			if code != tc.code || n != tc.n {
				t.Errorf("exit %d with %d scenarios, want exit %d with %d (%v)", code, n, tc.code, tc.n, err)
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q, want it to say %q", stderr.String(), tc.stderr)
			}
		})
	}
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}
