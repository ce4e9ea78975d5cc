package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testimages"
	"github.com/chaosrun/chaosrun/record"
	"github.com/moby/moby/client"
)

// composeProjectDir is the realistic Compose project of the acceptance:
// nginx in front of an items API (built from app/), its worker, PostgreSQL
// and Redis, written as a team writes it for `docker compose up`.
const composeProjectDir = "testdata/composeproject"

// composeProject prepares a copy of the project as its team would before
// `docker compose up`: the images it names (built here from Debian's
// packages by testimages, reused across tests; `chaosrun images --prune`
// removes them) and the API's static binary in its build context. It
// returns the copy's folder.
func composeProject(t *testing.T, cli *client.Client) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	if _, err := testimages.Ensure(ctx, cli, repoRoot(t), nil); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "composeproject")
	if err := os.CopyFS(dir, os.DirFS(composeProjectDir)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", filepath.Join(dir, "app", "app"), "./"+composeProjectDir+"/app")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the items API: %v\n%s", err, out)
	}
	t.Logf("images and the API's binary ready in %s", time.Since(start).Round(time.Millisecond))
	return dir
}

// projectLeftovers lists what of the items project is on the engine: its
// named volume (db-data, whatever the prefix) and images built from its
// build: sections (a tag naming app, worker or the project, whatever the
// scheme), except those in before (there before the run: see engineState).
func projectLeftovers(t *testing.T, cli *client.Client, before map[string]bool) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs.Items {
		if strings.Contains(v.Name, "db-data") && !before["volume:"+v.Name] {
			out = append(out, "volume "+v.Name)
		}
	}
	is, err := cli.ImageList(ctx, client.ImageListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range is.Items {
		for _, tag := range im.RepoTags {
			if before["image:"+tag] {
				continue
			}
			if strings.Contains(tag, "composeproject") || strings.Contains(tag, "app") || strings.Contains(tag, "worker") {
				out = append(out, "image "+tag)
			}
		}
	}
	return out
}

// engineState is every image tag ("image:TAG") and volume ("volume:NAME")
// on the engine.
func engineState(t *testing.T, cli *client.Client) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	is, err := cli.ImageList(ctx, client.ImageListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]bool{}
	for _, im := range is.Items {
		for _, tag := range im.RepoTags {
			state["image:"+tag] = true
		}
	}
	for _, v := range vs.Items {
		state["volume:"+v.Name] = true
	}
	return state
}

// TestDockerComposeProject runs the realistic Compose project under
// chaosrun on the Docker testbed, as the acceptance asks:
//   - a latency fault on app->db splits an A/B pair through the API's own
//     DB_TIMEOUT: with it (200 ms) lists stay fast from the cache; with
//     --set app.env.DB_TIMEOUT=0s they wait for the database and the run
//     breaches list-p99-bounded;
//   - a host_kill of db (restart: unless-stopped, a named volume) is
//     recovered, and every row the API acknowledged before the kill is
//     still there at the end (the API's /admin/consistency end check).
//
// Every run leaves no container, network, volume or built image behind.
func TestDockerComposeProject(t *testing.T) {
	skipShort(t)
	cli := requireDockerEngine(t)
	dir := composeProject(t, cli)
	t.Setenv("ITEMS_HTTP_PORT", freePort(t)) // the port compose.yaml publishes nginx on (default 8000)
	if left := projectLeftovers(t, cli, nil); len(left) > 0 {
		t.Logf("the engine already holds images or volumes like the project's (not counted as the runs' leftovers): %v", left)
	}
	type arm struct {
		name, scenario, runName string
		sets                    []string
		code                    int
		breach                  string
	}
	// Each arm runs on a copy of the project of its own (run-scoped names,
	// free ports, the published port unbound), one after the other, and
	// the engine's leftovers are checked once a pair has ended. Side by
	// side, the arms failed each other: the slow-db fault makes the API
	// cancel every read at 200 ms, and pgx then closes the connection and
	// opens another (a PostgreSQL fork and a SCRAM login each), a storm
	// that takes both cores; a killed database recovers under the other
	// arm's load too slowly for writes-recover.
	pairs := []struct {
		name string
		arms []arm
	}{
		{"slow-db", []arm{
			{"slow-db-timeout-holds", "scenario.yaml", "items-slow-db", nil, exitOK, ""},
			{"slow-db-no-timeout-breaches", "scenario.yaml", "items-slow-db", []string{"--set", "app.env.DB_TIMEOUT=0s"}, exitBreach, "list-p99-bounded"},
		}},
		{"db-kill", []arm{
			{"db-kill-recovers", "db-kill.yaml", "items-db-kill", nil, exitOK, ""},
			// The same kill with the policy overridden as a team would
			// (compose.override.yaml, merged as Compose merges it): the
			// harness brings db back, but not its restart policy.
			{"db-kill-no-restart-policy-breaches", "db-kill.yaml", "items-db-kill", nil, exitBreach, "db-restarted-by-its-policy"},
		}},
	}
	for _, pair := range pairs {
		before := engineState(t, cli)
		t.Run(pair.name, func(t *testing.T) {
			for _, tc := range pair.arms {
				t.Run(tc.name, func(t *testing.T) {
					own := filepath.Join(t.TempDir(), "composeproject")
					if err := os.CopyFS(own, os.DirFS(dir)); err != nil {
						t.Fatal(err)
					}
					runComposeArm(t, cli, own, tc.name, tc.scenario, tc.runName, tc.sets, tc.code, tc.breach)
				})
			}
		})
		if left := projectLeftovers(t, cli, before); len(left) > 0 {
			t.Errorf("left on the engine after the %s pair: %v", pair.name, left)
		}
	}
}

// runComposeArm runs one arm of TestDockerComposeProject in dir and checks
// its exit code, breach, record and what it left on the engine.
func runComposeArm(t *testing.T, cli *client.Client, dir, name, scenario, runName string, sets []string, want int, breach string) {
	t.Helper()
	if strings.Contains(name, "no-restart-policy") {
		override := "services:\n  db:\n    restart: \"no\"\n"
		if err := os.WriteFile(filepath.Join(dir, "compose.override.yaml"), []byte(override), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outDir := t.TempDir()
	args := append([]string{"run", "--testbed", "docker", "--out-dir", outDir}, sets...)
	start := time.Now()
	bg := startChaosrun(t, append(args, filepath.Join(dir, scenario))...)
	bg.wait(t, 3*time.Minute)
	code := bg.cmd.ProcessState.ExitCode()
	t.Logf("%s: exit %d in %s", name, code, time.Since(start).Round(time.Millisecond))
	if left := ownedBy(t, cli, bg.cmd.Process.Pid); len(left) > 0 {
		t.Errorf("left on the engine after the run: %v", left)
	}
	if code != want {
		t.Fatalf("exit %d, want %d\n%s", code, want, bg.stderr.String())
	}
	if breach != "" && !strings.Contains(bg.stderr.String(), breach) {
		t.Errorf("the breach does not name %s:\n%s", breach, bg.stderr.String())
	}
	r := readRecord(t, filepath.Join(outDir, runName, "run.json"))
	if r.Incomplete {
		t.Fatalf("record incomplete: %v", r.Problems)
	}
	if scenario == "db-kill.yaml" {
		checkRowsKept(t, r.EndChecks)
		checkRecovery(t, r, want == exitOK)
	}
	md, _ := os.ReadFile(filepath.Join(outDir, runName, "summary.md"))
	t.Logf("start-up %s\n%s", r.Timings.Startup, md)
}

// checkRowsKept fails unless the rows-kept end check ran and found every
// row the API acknowledged (at least 20: ten a second before the kill).
func checkRowsKept(t *testing.T, checks []record.EndCheck) {
	t.Helper()
	for _, ec := range checks {
		if ec.Name == "rows-kept" {
			if !ec.OK || ec.Values["acked"] < 20 || ec.Values["present"] != ec.Values["acked"] {
				t.Errorf("end check rows-kept: %+v (want ok: every acknowledged row present, at least 20)", ec)
			}
			return
		}
	}
	t.Errorf("no rows-kept end check in the record: %+v", checks)
}

// checkRecovery checks the kill's revert event: with the restart policy on,
// it carries the engine's restart (recovery_ms within the assertion's
// bound); without it, none.
func checkRecovery(t *testing.T, r *record.Run, byEngine bool) {
	t.Helper()
	for _, ev := range r.Faults {
		if ev.Fault != "kill-db" || ev.Action != record.Reverted {
			continue
		}
		ms, ok := ev.Counts[record.RecoveryHealthyMs]
		t.Logf("kill-db reverted at %s, counts %v", ev.Actual.Format(time.RFC3339Nano), ev.Counts)
		if ok != byEngine || byEngine && (ms <= 0 || ms >= 20000 || ev.Counts[record.RecoveryRestarts] != 1) {
			t.Errorf("kill-db revert counts %v: want the engine's one restart recorded: %v", ev.Counts, byEngine)
		}
		return
	}
	t.Errorf("no revert event of kill-db in %+v", r.Faults)
}

// freePort is a TCP port nothing on this machine listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// composeCheckEnv, set to 1, makes TestComposeProjectUnderCompose run the
// project under Docker Compose itself (docker-compose on the PATH).
const composeCheckEnv = "CHAOSRUN_DOCKER_COMPOSE"

// TestComposeProjectUnderCompose shows the project is a Compose project
// as teams write them, not one written for chaosrun: `docker-compose up`
// runs it, nginx answers on the published port, rows written through it
// are read back and the worker marks them seen; `down -v` removes it all.
// Opt-in (CHAOSRUN_DOCKER_COMPOSE=1): it proves the test data, not
// chaosrun.
func TestComposeProjectUnderCompose(t *testing.T) {
	skipShort(t)
	if os.Getenv(composeCheckEnv) != "1" {
		t.Skipf("set %s=1 to run the project under docker-compose", composeCheckEnv)
	}
	compose, err := exec.LookPath("docker-compose")
	if err != nil {
		t.Skip("docker-compose is not installed")
	}
	cli := requireDockerEngine(t)
	dir := composeProject(t, cli)
	port := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dc := func(ctx context.Context, args ...string) error {
		cmd := exec.CommandContext(ctx, compose, append([]string{"-p", "itemscheck"}, args...)...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "ITEMS_HTTP_PORT="+port)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("docker-compose %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := dc(dctx, "down", "-v", "--rmi", "local", "--timeout", "5"); err != nil {
			t.Error(err)
		}
	})
	if err := dc(ctx, "up", "-d", "--build"); err != nil {
		t.Fatal(err)
	}
	base := "http://127.0.0.1:" + port
	for i := range 3 {
		if code, body := httpDo(t, "POST", base+"/items", fmt.Sprintf(`{"name":"widget-%d"}`, i)); code != http.StatusCreated {
			t.Fatalf("POST /items: %d %s", code, body)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := httpDo(t, "GET", base+"/items", "")
		if code == http.StatusOK && strings.Count(body, `"seen":true`) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /items: %d %s (want the 3 items, each seen by the worker)", code, body)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// httpDo sends one request (a JSON body when body is not empty) and
// returns the status and body.
func httpDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
