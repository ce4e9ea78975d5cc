// Package extension_test runs k6 scripts that use xk6-resilience against
// local test servers, with k6 built from the extension's current source.
// The scripts (xk6-resilience/testdata/k6) fail through k6 thresholds when
// the extension misbehaves; k6 exits 99 then.
package extension_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/wire"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// exitThresholds is k6's exit code when a threshold is crossed.
const exitThresholds = 99

var (
	buildOnce sync.Once
	k6Path    string
	repoRoot  string
	buildErr  error
)

// k6Binary builds (or finds cached) k6 with the extension's current source.
func k6Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		repoRoot, buildErr = k6build.FindRoot(".")
		if buildErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
		defer cancel()
		var b k6build.Binary
		b, buildErr = k6build.Ensure(ctx, k6build.Options{Root: repoRoot, Progress: os.Stderr, Getenv: os.Getenv})
		k6Path = b.Path
	})
	if buildErr != nil {
		t.Fatalf("k6 with xk6-resilience: %v", buildErr)
	}
	return k6Path
}

// script returns the path of a test script of the extension.
func script(name string) string {
	return filepath.Join(repoRoot, "xk6-resilience", "testdata", "k6", name)
}

// runK6 runs `k6 run` with env and returns its exit code and combined output.
func runK6(t testing.TB, env map[string]string, args ...string) (int, string) {
	t.Helper()
	code, out, _ := runK6CPU(t, env, args...)
	return code, out
}

// runK6CPU is runK6 that also returns the CPU time (user + system) k6 used.
func runK6CPU(t testing.TB, env map[string]string, args ...string) (int, string, time.Duration) {
	t.Helper()
	bin := k6Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"run", "--quiet", "--no-usage-report"}, args...)...)
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), cpu
	case errors.As(err, &ee) && ctx.Err() == nil:
		return ee.ExitCode(), out.String(), cpu
	}
	t.Fatalf("k6 run %v: %v\n%s", args, err, out.String())
	return -1, "", 0
}

// server is the test target: /bp always answers back pressure, /flaky fails
// attempts 0 and 1 (?attempt=N), /fail500 always fails, /slow answers after 300 ms, /ok
// echoes the deadline and criticality headers it got.
func server(t testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/bp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backpressure", "1")
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/fail500", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	})
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		if a := r.URL.Query().Get("attempt"); a == "0" || a == "1" {
			http.Error(w, "flaky", http.StatusBadGateway)
			return
		}
		echo(w, r)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
		}
		echo(w, r)
	})
	mux.HandleFunc("/ok", echo)
	mux.HandleFunc("/", echo)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func echo(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{
		"deadline": r.Header.Get("X-Deadline-Ms"), "criticality": r.Header.Get("X-Criticality")})
}

func TestAmplificationThresholds(t *testing.T) {
	k6Binary(t)
	srv := server(t)
	tests := []struct {
		name    string
		broken  string
		want    int
		crossed []string
	}{
		{"models behave", "0", 0, nil},
		{"models misconfigured", "1", exitThresholds, []string{
			"resilience_amplification{model:smart}", "resilience_amplification{model:naive}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := runK6(t, map[string]string{"TARGET": srv.URL, "BROKEN": tt.broken}, script("amplification.js"))
			if code != tt.want {
				t.Fatalf("k6 exit %d, want %d:\n%s", code, tt.want, out)
			}
			for _, m := range tt.crossed {
				if !crossed(out, m) {
					t.Errorf("threshold on %s not reported crossed:\n%s", m, out)
				}
			}
		})
	}
}

// crossed reports whether k6's summary marks a threshold of metric as failed.
func crossed(out, metric string) bool {
	sc := bufio.NewScanner(strings.NewReader(out))
	in := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, metric) {
			in = true
			continue
		}
		if in {
			if strings.HasPrefix(line, "✗") {
				return true
			}
			if !strings.HasPrefix(line, "✓") {
				in = false
			}
		}
	}
	return false
}

func TestModelsDeadlinesBudget(t *testing.T) {
	k6Binary(t)
	srv := server(t)
	code, out := runK6(t, map[string]string{"TARGET": srv.URL}, script("models.js"))
	if code != 0 {
		t.Fatalf("k6 exit %d:\n%s", code, out)
	}
}

func TestShapesRun(t *testing.T) {
	k6Binary(t)
	srv := server(t)
	code, out := runK6(t, map[string]string{"TARGET": srv.URL}, script("shapes.js"))
	if code != 0 {
		t.Fatalf("k6 exit %d:\n%s", code, out)
	}
}

func TestVersionListsExtension(t *testing.T) {
	bin := k6Binary(t)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" v1.8.1 (", "k6/x/resilience [js]", "resilience [output]"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("k6 version does not list %q:\n%s", want, out)
		}
	}
}

// seriesIn reads a resilience output file and sums counter series of metric by tags.
func seriesIn(t *testing.T, path, metric string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var msg wire.Envelope
		if err := json.Unmarshal(line, &msg); err != nil {
			t.Fatalf("%s: %v: %s", path, err, line)
		}
		for _, s := range msg.Series {
			if s.Metric == metric {
				out[fmt.Sprintf("%s/%s/%s", s.Tags["proxy"], s.Tags["toxic"], s.Tags["action"])] += s.Sum
			}
		}
	}
	return out
}

// TestExamplesRun runs every example script, shortened, against the test
// server (and a real Toxiproxy for the fault example), so they keep working.
func TestExamplesRun(t *testing.T) {
	k6Binary(t)
	srv := server(t)
	api := toxiproxyAPI(t, "tok")
	for _, tt := range []struct {
		script string
		env    map[string]string
	}{
		{"retry-storm.js", map[string]string{"DURATION": "4s", "EVERY": "2s", "LENGTH": "1s"}},
		{"hot-keys.js", map[string]string{"DURATION": "2s", "BOT_START": "1s"}},
		{"deadlines.js", map[string]string{"DURATION": "1s"}},
		{"inject-faults.js", map[string]string{"STEP_SECONDS": "1", "TOXIPROXY": api, "TOXIPROXY_TOKEN": "tok",
			"UPSTREAM": strings.TrimPrefix(srv.URL, "http://")}},
	} {
		t.Run(tt.script, func(t *testing.T) {
			tt.env["TARGET"] = srv.URL
			code, out := runK6(t, tt.env, filepath.Join(repoRoot, "xk6-resilience", "examples", tt.script))
			if code != 0 {
				t.Fatalf("k6 exit %d:\n%s", code, out)
			}
		})
	}
}
