package action_test

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/testenv"
)

// TestActionGatesAPullRequest runs action.yml's steps on a pull-request
// event against a catalog scenario with its protection off
// (bank-list-starvation, 15 s, list bulkhead off): the gate must exit 1,
// publish the JUnit failures in the job summary, find the baseline of the
// default branch, compare with it and leave one comment, updated (not
// added) when the gate runs again. Run under the heavy-test lock.
func TestActionGatesAPullRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a catalog scenario")
	}
	for _, tool := range [][2]string{{"jq", "jq"}, {"curl", "curl"}, {"xmllint", "libxml2-utils"}} {
		testenv.Tool(t, tool[0], tool[1])
	}
	a := readAction(t)
	root := repoRoot(t)
	gh := &fakeGitHub{t: t, comments: []map[string]any{{"id": float64(1), "body": "an unrelated comment"}}}
	srv := httptest.NewServer(gh)
	defer srv.Close()

	ws, temp := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "gate"), 0o755); err != nil {
		t.Fatal(err)
	}
	sc, err := os.ReadFile(filepath.Join(root, "scenarios/bank-list-starvation.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "gate/bank-list-starvation.yaml"), sc, 0o644)
	event := filepath.Join(temp, "event.json")
	os.WriteFile(event, []byte(`{"pull_request":{"number":7},"repository":{"default_branch":"main"}}`), 0o644)

	r := &runner{t: t, outputs: map[string]map[string]string{},
		inputs: map[string]string{},
		ctx: map[string]string{"github.action_path": root, "github.token": "test-token", "github.event_name": "pull_request",
			"github.workspace": ws, "runner.temp": temp},
		env: []string{"HOME=" + os.Getenv("HOME"), "GITHUB_ACTION_PATH=" + root, "GITHUB_WORKSPACE=" + ws, "RUNNER_TEMP=" + temp,
			"RUNNER_OS=Linux", "GITHUB_REPOSITORY=o/r", "GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH=" + event,
			"GITHUB_API_URL=" + srv.URL, "GITHUB_SERVER_URL=https://github.example", "GITHUB_RUN_ID=99",
			"GOFLAGS=" + os.Getenv("GOFLAGS"), "GOPATH=" + goEnv(t, "GOPATH"), "GOCACHE=" + goEnv(t, "GOCACHE")},
	}
	for k, in := range a.Inputs {
		r.inputs[k] = r.expand(in.Default)
	}
	r.inputs["scenarios"] = "gate/"
	r.inputs["args"] = "--set workload.duration=15s --set bank.list-bulkhead=off"
	r.inputs["install-deps"] = "false"
	var uploaded, downloaded string
	r.stand = func(s step, with map[string]string) {
		switch name, _, _ := strings.Cut(s.Uses, "@"); name {
		case "actions/setup-go", "actions/cache":
			for k, v := range with {
				if strings.TrimSpace(v) == "" {
					t.Errorf("%s: with.%s is empty", s.Uses, k)
				}
			}
			if s.Name == "Cache the k6 build" {
				restoreK6(t, with["path"]) // a cache hit
			}
		case "actions/upload-artifact":
			uploaded = with["path"]
		case "actions/download-artifact":
			if with["run-id"] != "4242" || with["name"] != "chaosrun-baseline" || with["github-token"] != "test-token" {
				t.Errorf("download-artifact with %v: want run 4242's chaosrun-baseline", with)
			}
			// What the download leaves: the baseline's run records (here
			// the head's own, so the comparison finds no change).
			downloaded = with["path"]
			copyRecords(t, r.outputs["run"]["out-dir"], downloaded)
		default:
			t.Fatalf("no stand-in for %s", s.Uses)
		}
	}
	r.runAll(a.Runs.Steps)

	if code := r.outputs["run"]["code"]; code != "1" {
		t.Errorf("chaosrun run exited %s, want 1 (a breach)", code)
	}
	if r.lastCode != 1 || !r.failed {
		t.Errorf("the gate's last step exited %d, want 1", r.lastCode)
	}
	if uploaded == "" || downloaded == "" {
		t.Errorf("results uploaded from %q, baseline downloaded to %q: want both", uploaded, downloaded)
	}
	checkSummary(t, r.summary)
	checkComment(t, gh, 1)

	// The gate again on the same pull request: the comment is updated.
	for _, s := range a.Runs.Steps {
		if s.Name == "Comment on the pull request" {
			r.failed = false
			r.shell(s)
		}
	}
	checkComment(t, gh, 2)
}

// restoreK6 stands in for a cache hit of the k6 build: the machine's own
// k6 build cache appears at path.
func restoreK6(t *testing.T, path string) {
	t.Helper()
	src := os.Getenv("CHAOSRUN_CACHE")
	if src == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		src = filepath.Join(base, "chaosrun")
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src, path); err != nil {
		t.Fatal(err)
	}
}

func goEnv(t *testing.T, k string) string {
	out, err := exec.Command("go", "env", k).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func copyRecords(t *testing.T, from, to string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(from, "*", "run.json"))
	if len(files) == 0 {
		t.Fatalf("no run.json below %s", from)
	}
	for _, f := range files {
		dst := filepath.Join(to, filepath.Base(filepath.Dir(f)), "run.json")
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(dst), 0o755)
		}
		if err == nil {
			err = os.WriteFile(dst, b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func checkSummary(t *testing.T, summary string) {
	t.Helper()
	for _, want := range []string{"bank-list-starvation: BREACH", "### JUnit: ", "| ❌ fail |", "| bank-list-starvation | "} {
		if !strings.Contains(summary, want) {
			t.Errorf("job summary lacks %q:\n%s", want, summary)
		}
	}
	if strings.Contains(summary, "### JUnit: 0 tests") || strings.Contains(summary, " 0 failures") {
		t.Errorf("job summary's JUnit totals show no failure:\n%s", summary)
	}
}

func checkComment(t *testing.T, gh *fakeGitHub, calls int) {
	t.Helper()
	gh.mu.Lock()
	defer gh.mu.Unlock()
	if gh.posts != 1 || gh.posts+gh.patches != calls || len(gh.comments) != 2 {
		t.Fatalf("%d posts, %d patches, %d comments; want one gate comment, written %d times", gh.posts, gh.patches, len(gh.comments), calls)
	}
	body, _ := gh.comments[1]["body"].(string)
	for _, want := range []string{"<!-- chaosrun-gate: resilience gate -->", "## chaosrun resilience gate: ❌ breach",
		"bank-list-starvation: BREACH", "### JUnit: ", "### Compared with the baseline", "https://github.example/o/r/actions/runs/99"} {
		if !strings.Contains(body, want) {
			t.Errorf("comment lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "No baseline to compare with") {
		t.Errorf("comment says there is no baseline:\n%s", body)
	}
	if gh.comments[0]["body"] != "an unrelated comment" {
		t.Errorf("the unrelated comment was changed: %v", gh.comments[0])
	}
}
