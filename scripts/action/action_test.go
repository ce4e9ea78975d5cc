// Package action_test runs the repository's composite action (action.yml)
// on this machine: its shell steps for real, against a catalog scenario,
// with the GitHub runner's environment files and a local HTTP server in
// place of the GitHub API; the steps of third-party actions are stood in
// for by what they would leave behind.
package action_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/chaosrun/chaosrun/internal/testenv"
)

type action struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []step `yaml:"steps"`
	} `yaml:"runs"`
}

type step struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readAction(t *testing.T) action {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

// pinned is a third-party action reference pinned to a full commit SHA.
var pinned = regexp.MustCompile(`^[\w.-]+/[\w.-]+@[0-9a-f]{40}$`)

func TestActionPinsEveryActionBySHA(t *testing.T) {
	files := []string{filepath.Join(repoRoot(t), "action.yml")}
	wf, _ := filepath.Glob(filepath.Join(repoRoot(t), ".github/workflows/*.yml"))
	files = append(files, wf...)
	uses := regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*(\S+)`)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range uses.FindAllStringSubmatch(string(b), -1) {
			ref := m[1]
			if strings.HasPrefix(ref, "./") {
				continue
			}
			n++
			if !pinned.MatchString(ref) {
				t.Errorf("%s: %s is not pinned by commit SHA", filepath.Base(f), ref)
			}
		}
	}
	if n == 0 {
		t.Fatal("no third-party action found: the check checked nothing")
	}
}

// runner runs an action's steps as GitHub's runner would: expressions,
// conditions, GITHUB_OUTPUT, GITHUB_PATH, GITHUB_STEP_SUMMARY.
type runner struct {
	t       *testing.T
	inputs  map[string]string
	ctx     map[string]string // github.*, runner.*
	env     []string
	path    []string
	outputs map[string]map[string]string
	summary string
	failed  bool
	stand   func(s step, with map[string]string) // third-party actions
	// instead stands in for run steps by name (a fake chaosrun's install).
	instead  map[string]func()
	lastCode int
}

var exprRe = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

func (r *runner) value(expr string) string {
	switch {
	case strings.HasPrefix(expr, "inputs."):
		return r.inputs[strings.TrimPrefix(expr, "inputs.")]
	case strings.HasPrefix(expr, "steps."):
		parts := strings.Split(expr, ".")
		if len(parts) != 4 || parts[2] != "outputs" {
			r.t.Fatalf("expression %q: not steps.ID.outputs.NAME", expr)
		}
		return r.outputs[parts[1]][parts[3]]
	case strings.HasPrefix(expr, "'") && strings.HasSuffix(expr, "'"):
		return strings.Trim(expr, "'")
	}
	v, ok := r.ctx[expr]
	if !ok {
		r.t.Fatalf("expression %q is not one this runner knows", expr)
	}
	return v
}

func (r *runner) expand(s string) string {
	return exprRe.ReplaceAllStringFunc(s, func(m string) string { return r.value(exprRe.FindStringSubmatch(m)[1]) })
}

// cond evaluates the conditions action.yml uses: always(), A == 'v',
// A != 'v', joined by &&.
func (r *runner) cond(s string) bool {
	if s == "" {
		return !r.failed
	}
	ok, always := true, false
	for _, term := range strings.Split(s, "&&") {
		term = strings.TrimSpace(term)
		switch {
		case term == "always()":
			always = true
		case strings.Contains(term, "=="):
			a, b, _ := strings.Cut(term, "==")
			ok = ok && r.value(strings.TrimSpace(a)) == r.value(strings.TrimSpace(b))
		case strings.Contains(term, "!="):
			a, b, _ := strings.Cut(term, "!=")
			ok = ok && r.value(strings.TrimSpace(a)) != r.value(strings.TrimSpace(b))
		default:
			r.t.Fatalf("condition %q: term %q is not one this runner knows", s, term)
		}
	}
	return ok && (always || !r.failed)
}

func (r *runner) runAll(steps []step) {
	for i, s := range steps {
		if !r.cond(s.If) {
			r.t.Logf("step %d %q (id %q): skipped (if: %s)", i, s.Name, s.ID, s.If)
			continue
		}
		if s.Uses != "" {
			with := map[string]string{}
			for k, v := range s.With {
				with[k] = r.expand(v)
			}
			r.stand(s, with)
			continue
		}
		if f, ok := r.instead[s.Name]; ok {
			f()
			continue
		}
		r.shell(s)
	}
}

func (r *runner) shell(s step) {
	t := r.t
	dir := t.TempDir()
	outFile, sumFile, pathFile := filepath.Join(dir, "output"), filepath.Join(dir, "summary"), filepath.Join(dir, "path")
	for _, f := range []string{outFile, sumFile, pathFile} {
		os.WriteFile(f, nil, 0o644)
	}
	if s.Shell != "bash" {
		t.Fatalf("step %s: shell %q, want bash", s.ID, s.Shell)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", r.expand(s.Run))
	cmd.Dir = r.ctx["github.workspace"]
	env := append(append([]string(nil), r.env...), "GITHUB_OUTPUT="+outFile, "GITHUB_STEP_SUMMARY="+sumFile, "GITHUB_PATH="+pathFile,
		"PATH="+strings.Join(append(append([]string(nil), r.path...), os.Getenv("PATH")), ":"))
	for k, v := range s.Env {
		env = append(env, k+"="+r.expand(v))
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	t.Logf("step %q (id %q) exited %d:\n%s", s.Name, s.ID, cmd.ProcessState.ExitCode(), out)
	r.lastCode = cmd.ProcessState.ExitCode()
	if err != nil {
		r.failed = true
	}
	b, _ := os.ReadFile(outFile)
	if s.ID != "" {
		r.outputs[s.ID] = map[string]string{}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				r.outputs[s.ID][k] = v
			}
		}
	}
	sb, _ := os.ReadFile(sumFile)
	r.summary += string(sb)
	pb, _ := os.ReadFile(pathFile)
	for _, p := range strings.Fields(string(pb)) {
		r.path = append([]string{p}, r.path...)
	}
}

// fakeGitHub answers the REST calls the action's scripts make.
type fakeGitHub struct {
	t        *testing.T
	mu       sync.Mutex
	comments []map[string]any
	posts    int
	patches  int
}

func (g *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer test-token" {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/repos/o/r/actions/artifacts":
		if r.URL.Query().Get("name") != "chaosrun-baseline" {
			http.Error(w, "unexpected name", http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, `{"total_count":3,"artifacts":[
		  {"id":1,"name":"chaosrun-baseline","expired":false,"created_at":"2026-11-20T10:00:00Z","workflow_run":{"id":4242,"head_branch":"main"}},
		  {"id":2,"name":"chaosrun-baseline","expired":false,"created_at":"2026-11-21T10:00:00Z","workflow_run":{"id":5555,"head_branch":"feature"}},
		  {"id":3,"name":"chaosrun-baseline","expired":true,"created_at":"2026-11-22T10:00:00Z","workflow_run":{"id":6666,"head_branch":"main"}}]}`)
	case r.Method == http.MethodGet && r.URL.Path == "/repos/o/r/issues/7/comments":
		json.NewEncoder(w).Encode(g.comments)
	case r.Method == http.MethodPost && r.URL.Path == "/repos/o/r/issues/7/comments":
		var c map[string]any
		json.NewDecoder(r.Body).Decode(&c)
		g.posts++
		c["id"] = float64(100 + len(g.comments))
		g.comments = append(g.comments, c)
		json.NewEncoder(w).Encode(c)
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/repos/o/r/issues/comments/"):
		var c map[string]any
		json.NewDecoder(r.Body).Decode(&c)
		for _, old := range g.comments {
			if fmt.Sprint(old["id"]) == strings.TrimPrefix(r.URL.Path, "/repos/o/r/issues/comments/") {
				old["body"] = c["body"]
				g.patches++
				json.NewEncoder(w).Encode(old)
				return
			}
		}
		http.NotFound(w, r)
	default:
		g.t.Errorf("unexpected GitHub API call %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	}
}

// TestActionShellIsClean runs shellcheck on the shell of every run step of
// action.yml (actionlint checks the workflows' own, not an action's).
func TestActionShellIsClean(t *testing.T) {
	sc := testenv.Tool(t, "shellcheck", "shellcheck")
	a := readAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", a.Runs.Using)
	}
	n := 0
	for i, s := range a.Runs.Steps {
		if s.Run == "" {
			continue
		}
		n++
		f := filepath.Join(t.TempDir(), "step.sh")
		body := exprRe.ReplaceAllString(s.Run, "EXPR")
		os.WriteFile(f, []byte("#!/usr/bin/env bash\n"+body+"\n"), 0o644)
		if out, err := exec.Command(sc, "-s", "bash", f).CombinedOutput(); err != nil {
			t.Errorf("step %d %q (id %q): shellcheck:\n%s", i, s.Name, s.ID, out)
		}
	}
	if n == 0 {
		t.Fatal("no run step checked")
	}
}
