package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarioload"
	"github.com/chaosrun/chaosrun/workloads/engine"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// TestFlagsPrepare: a command's setup takes the testbed and shards from
// its flags and --k6 resolved against the working folder; what cannot be
// set up ends the command with exit 3, or 130 once interrupted.
func TestFlagsPrepare(t *testing.T) {
	wd := t.TempDir()
	vars := map[string]string{"CHAOSRUN_CACHE": t.TempDir(), "CHAOSRUN_ROOT": t.TempDir()}
	getenv := func(k string) string { return vars[k] }
	env := Env{Scenarios: scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: wd}, K6: k6build.Options{Getenv: getenv, Dir: wd}},
		Executable: "/bin/chaosrun", Getenv: getenv}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	load := func(file string) *scenario.Scenario {
		l := scenarioload.Loader{FS: workdir.FS{FS: os.DirFS("/"), Dir: repo}, K6: env.Scenarios.K6}
		sc, err := l.Load(context.Background(), file, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	nat, k6 := load("scenarios/bank-slow-vault.yaml"), load("scenarios/k6/bank-slow-vault.yaml")
	live := context.Background()
	ended, cancel := context.WithCancel(live)
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		k6   string
		sc   *scenario.Scenario
		code int
		msg  string
	}{
		{"native", live, "", nat, exitcode.OK, ""},
		{"k6 without k6", live, "", k6, exitcode.RunError, "engine: k6 needs k6"},
		{"--k6 resolved", live, "bin/k6", k6, exitcode.RunError, filepath.Join(wd, "bin", "k6")},
		{"interrupted", ended, "bin/k6", k6, exitcode.Interrupted, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Flags{Testbed: "local", Shards: 3}
			s, err := f.Prepare(tt.ctx, env, tt.k6, engine.Results{Listen: "127.0.0.1:0"}, []*scenario.Scenario{tt.sc})
			if tt.code == exitcode.OK {
				if err != nil || s.o.Testbed != "local" || s.o.Shards != 3 || s.o.Executable != "/bin/chaosrun" || s.o.Results.Listen != "127.0.0.1:0" {
					t.Fatalf("setup %+v, err %v", s, err)
				}
				return
			}
			if ee, ok := exitcode.As(err); !ok || ee.Code != tt.code || !strings.Contains(ee.Err.Error(), tt.msg) {
				t.Fatalf("got %v, want exit %d saying %q", err, tt.code, tt.msg)
			}
		})
	}
}
