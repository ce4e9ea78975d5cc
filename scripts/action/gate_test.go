package action_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

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
	gh := &fakeGitHub{t: t, comments: []map[string]any{{"id": float64(1), "body": "an unrelated comment"}}}
	srv := httptest.NewServer(gh)
	defer srv.Close()
	r := newGate(t, srv.URL, "pull_request", map[string]string{"scenarios": "gate/",
		"args": "--set workload.duration=15s --set bank.list-bulkhead=off"})
	ws := r.ctx["github.workspace"]
	if err := os.MkdirAll(filepath.Join(ws, "gate"), 0o755); err != nil {
		t.Fatal(err)
	}
	sc, err := os.ReadFile(filepath.Join(repoRoot(t), "scenarios/bank-list-starvation.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "gate/bank-list-starvation.yaml"), sc, 0o644)
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

// fakeChaosrun stands in for chaosrun: `run` writes a results folder as
// the real one does and exits FAKE_RUN_CODE, `diff` writes its Markdown
// (for exit 0 and 1, as the real one) and exits FAKE_DIFF_CODE.
const fakeChaosrun = `#!/usr/bin/env bash
set -euo pipefail
cmd=$1
shift
flag() { while [ $# -gt 1 ]; do if [ "$1" = "$want" ]; then echo "$2"; return; fi; shift; done; }
case "$cmd" in
  version) echo "chaosrun (fake)" ;;
  run)
    out=$(want=--out-dir flag "$@")
    mkdir -p "$out/fake"
    echo "fake: exit $FAKE_RUN_CODE" > "$out/fake/summary.md"
    echo '{"schema_version":1}' > "$out/fake/run.json"
    echo '<testsuites name="chaosrun" tests="1" failures="0" errors="0"><testsuite name="fake" tests="1" failures="0" errors="0"><testcase name="c: count > 0" classname="fake" time="1.000"></testcase></testsuite></testsuites>' > "$out/fake/junit.xml"
    exit "$FAKE_RUN_CODE" ;;
  diff)
    md=$(want=--markdown flag "$@")
    if [ "$FAKE_DIFF_CODE" -le 1 ]; then echo "fake comparison: diff exited $FAKE_DIFF_CODE" > "$md"; fi
    exit "$FAKE_DIFF_CODE" ;;
  *) echo "fake chaosrun: no $cmd" >&2; exit 2 ;;
esac
`

// TestActionGateOutcomes runs action.yml's steps with a stand-in chaosrun
// (fakeChaosrun) for each way a gate or a baseline run can end: the
// gate's exit code, whether the results are uploaded, the comment and
// the job summary. A baseline is never uploaded from a harness error;
// diff's 2 and 3 are no comparison, said, not a failure.
func TestActionGateOutcomes(t *testing.T) {
	for _, tool := range [][2]string{{"jq", "jq"}, {"curl", "curl"}, {"xmllint", "libxml2-utils"}} {
		testenv.Tool(t, tool[0], tool[1])
	}
	baseline := baselineInputs(t)
	tests := []struct {
		name             string
		inputs           map[string]string // beside the defaults; baseline: the baseline workflow's, on a push
		run, diff        string            // chaosrun's exit codes
		gate             int
		upload           bool
		comment, summary string // "" for no comment
	}{
		{"pass", nil, "0", "0", 0, true, "## chaosrun resilience gate: ✅ all checks held", "fake comparison: diff exited 0"},
		{"breach, fail-on-breach false", map[string]string{"fail-on-breach": "false"}, "1", "0", 0, true, "## chaosrun resilience gate: ❌ breach", "fake: exit 1"},
		{"breach", nil, "1", "0", 1, true, "❌ breach", "fake: exit 1"},
		{"regression", nil, "0", "1", 1, true, "✅ all checks held · 📉 regression against the baseline", "fake comparison: diff exited 1"},
		{"regression, fail-on-regression false", map[string]string{"fail-on-regression": "false"}, "0", "1", 0, true, "📉 regression", ""},
		{"nothing comparable", nil, "0", "2", 0, true, "No comparison: chaosrun diff exited 2", "No comparison with the baseline: chaosrun diff exited 2"},
		{"baseline incomplete", nil, "0", "3", 0, true, "No comparison: chaosrun diff exited 3", "No comparison with the baseline: chaosrun diff exited 3"},
		{"harness error", nil, "3", "0", 3, true, "⚠️ harness error (exit 3)", ""},
		{"baseline from a harness error", baseline, "3", "", 3, false, "", "No baseline uploaded: chaosrun run exited 3"},
		{"baseline from a breach", baseline, "1", "", 0, true, "", "fake: exit 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gh := &fakeGitHub{t: t, comments: []map[string]any{}}
			srv := httptest.NewServer(gh)
			defer srv.Close()
			event := "pull_request"
			if tc.inputs != nil && tc.inputs["artifact-name"] != "" {
				event = "push"
			}
			r := fakeGate(t, srv.URL, event, tc.inputs, "FAKE_RUN_CODE="+tc.run, "FAKE_DIFF_CODE="+tc.diff)
			uploaded := false
			r.stand = func(s step, with map[string]string) {
				switch name, _, _ := strings.Cut(s.Uses, "@"); name {
				case "actions/upload-artifact":
					uploaded = with["name"] != ""
				case "actions/download-artifact":
					copyRecords(t, r.outputs["run"]["out-dir"], with["path"])
				}
			}
			r.runAll(readAction(t).Runs.Steps)
			if r.lastCode != tc.gate {
				t.Errorf("the gate exited %d, want %d", r.lastCode, tc.gate)
			}
			if uploaded != tc.upload || r.outputs["run"]["upload"] != fmt.Sprint(tc.upload) {
				t.Errorf("uploaded %v (output upload=%q), want %v", uploaded, r.outputs["run"]["upload"], tc.upload)
			}
			gh.mu.Lock()
			defer gh.mu.Unlock()
			switch {
			case tc.comment == "" && len(gh.comments) != 0:
				t.Errorf("a comment on a push: %v", gh.comments)
			case tc.comment != "" && (len(gh.comments) != 1 || !strings.Contains(gh.comments[0]["body"].(string), tc.comment)):
				t.Errorf("comments %v: want one saying %q", gh.comments, tc.comment)
			}
			if !strings.Contains(r.summary, tc.summary) {
				t.Errorf("job summary lacks %q:\n%s", tc.summary, r.summary)
			}
		})
	}
}

// fakeGate is newGate with fakeChaosrun, given env, as chaosrun.
func fakeGate(t *testing.T, api, event string, inputs map[string]string, env ...string) *runner {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "chaosrun"), []byte(fakeChaosrun), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newGate(t, api, event, inputs)
	r.env = append(r.env, env...)
	r.path = []string{bin}
	r.instead = map[string]func(){"Install chaosrun": func() {}} // the stand-in is on the path already
	return r
}

// newGate is a runner of action.yml on event (pull_request: #7; else a
// push) in a workspace and runner temp of its own, the GitHub API at
// api, with inputs over the action's defaults (install-deps false).
func newGate(t *testing.T, api, event string, inputs map[string]string) *runner {
	t.Helper()
	root := repoRoot(t)
	ws, temp := t.TempDir(), t.TempDir()
	ev := filepath.Join(temp, "event.json")
	body := `{"repository":{"default_branch":"main"}}`
	if event == "pull_request" {
		body = `{"pull_request":{"number":7},"repository":{"default_branch":"main"}}`
	}
	if err := os.WriteFile(ev, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &runner{t: t, outputs: map[string]map[string]string{}, inputs: map[string]string{},
		ctx: map[string]string{"github.action_path": root, "github.token": "test-token", "github.event_name": event,
			"github.workspace": ws, "runner.temp": temp},
		env: []string{"HOME=" + os.Getenv("HOME"), "GITHUB_ACTION_PATH=" + root, "GITHUB_WORKSPACE=" + ws, "RUNNER_TEMP=" + temp,
			"RUNNER_OS=Linux", "GITHUB_REPOSITORY=o/r", "GITHUB_EVENT_NAME=" + event, "GITHUB_EVENT_PATH=" + ev,
			"GITHUB_API_URL=" + api, "GITHUB_SERVER_URL=https://github.example", "GITHUB_RUN_ID=99",
			"GOFLAGS=" + os.Getenv("GOFLAGS"), "GOPATH=" + goEnv(t, "GOPATH"), "GOCACHE=" + goEnv(t, "GOCACHE")},
	}
	for k, in := range readAction(t).Inputs {
		r.inputs[k] = r.expand(in.Default)
	}
	r.inputs["install-deps"] = "false"
	for k, v := range inputs {
		r.inputs[k] = v
	}
	return r
}

// baselineInputs are the action's inputs in .github/workflows/baseline.yml.
func baselineInputs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), ".github", "workflows", "baseline.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []step `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	for _, s := range wf.Jobs["baseline"].Steps {
		if s.Uses == "./" {
			return s.With
		}
	}
	t.Fatal("baseline.yml: no step uses the action (./)")
	return nil
}
