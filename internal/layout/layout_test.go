package layout

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// module is the import path of the repository's root module.
const module = "github.com/chaosrun/chaosrun/"

// harness stands, as a rule's to, for every package of the module outside
// the rule's from (the models module, dependency-free and shared with the
// k6 extension, is not the harness).
const harness = "*"

// models is the folder of the dependency-free models module.
const models = "models"

// schemagen generates JSON Schemas from Go types: a library of its own,
// which the scenario model may use because it imports nothing of the
// harness itself.
const schemagen = "internal/schemagen"

// suggest finds the name a typo meant: a leaf like schemagen.
const suggest = "internal/suggest"

// rule forbids the packages at or under from to depend on those at or
// under to.
type rule struct{ from, to string }

func (r rule) String() string {
	if r.to == harness {
		return r.from + " → harness packages"
	}
	return r.from + " → " + r.to
}

// rules are the import rules of DESIGN.md.
var rules = []rule{
	{"assertions", "workloads"},
	{"report", "workloads"},
	{"report", "testbed"},
	{"assertions", "testbed"},
	{"assertions", "runner"},
	{"report", "runner"},
	{"export", "runner"},
	{"testbed", "faults"},
	{"testbed", "targets"},
	{"targets", harness},
	// The scenario model knows nothing of Docker, Compose or HTTP: the
	// Compose importer (compose) and the testbeds build on it, not it on them.
	{"scenario", harness},
	{"compose", "testbed"},
	// The models module is shared with the k6 extension: it imports
	// nothing of the harness (its own go.mod keeps it free of anything else).
	{models, harness},
	{schemagen, harness},
	{suggest, harness},
	// Loading a scenario starts nothing: no run, no container.
	{"scenarioload", "runner"},
	{"scenarioload", "testbed/docker"},
	{"scenarioload", "targets"},
	// Judging a record needs no run and no testbed: one function from a
	// record to verdicts (assertions.Judge).
	{"judge", "runner"},
	{"judge", "testbed"},
	// The native engine sends load; it links no reference target.
	{"workloads/nativerun", "targets"},
	// Leaves every command shares: they import nothing of the harness.
	{"internal/exitcode", harness},
	{"internal/workdir", harness},
	{"internal/logs", harness},
	// The block bootstrap is statistics alone: diff and the fault-effect
	// check share it.
	{"bootstrap", harness},
}

// knownViolations are rules the code breaks today, while the change that
// fixes them is under way. The test tolerates them and fails once one
// holds, so that it is taken off this list.
var knownViolations = map[rule]bool{}

// under reports whether pkg (module-relative) is dir or a package below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// breaks lists the module-relative deps of pkg that r forbids.
func (r rule) breaks(pkg string, deps []string) []string {
	if !under(pkg, r.from) {
		return nil
	}
	var bad []string
	for _, d := range deps {
		if r.to == harness && !under(d, r.from) && !under(d, models) && !under(d, schemagen) && !under(d, suggest) || r.to != harness && under(d, r.to) {
			bad = append(bad, d)
		}
	}
	return bad
}

// moduleDeps is what `go list -deps` lists for each package of the
// module (its .Deps: every package it imports, directly or not; tests'
// imports excluded), keeping the module's own packages, module-relative.
func moduleDeps(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], module) {
			continue
		}
		pkg := strings.TrimPrefix(f[0], module)
		deps[pkg] = []string{}
		for _, d := range f[1:] {
			if rel, ok := strings.CutPrefix(d, module); ok {
				deps[pkg] = append(deps[pkg], rel)
			}
		}
	}
	return deps
}

// violations maps each broken rule to its offences ("pkg → dep").
func violations(deps map[string][]string) map[rule][]string {
	out := map[rule][]string{}
	for pkg, ds := range deps {
		for _, r := range rules {
			for _, d := range r.breaks(pkg, ds) {
				out[r] = append(out[r], pkg+" → "+d)
			}
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

func TestImportRules(t *testing.T) {
	deps := moduleDeps(t)
	for _, must := range []string{"assertions", "report", "export/k8s", "testbed", "testbed/docker", "targets/platform", "scenario", "compose", "scenarioload", "judge", "workloads/nativerun", "internal/exitcode", "internal/workdir"} {
		if _, ok := deps[must]; !ok {
			t.Fatalf("go list did not list %s: the rules check nothing", must)
		}
	}
	bad := violations(deps)
	for _, r := range rules {
		switch offences := bad[r]; {
		case len(offences) > 0 && !knownViolations[r]:
			t.Errorf("import rule %s is broken:\n  %s", r, strings.Join(offences, "\n  "))
		case len(offences) > 0:
			t.Logf("import rule %s: known violation (%d imports), being fixed", r, len(offences))
		case knownViolations[r]:
			t.Errorf("import rule %s holds now: take it off knownViolations", r)
		}
	}
	for r := range knownViolations {
		if !containsRule(r) {
			t.Errorf("knownViolations names %s, which is not a rule", r)
		}
	}
}

func containsRule(r rule) bool {
	for _, x := range rules {
		if x == r {
			return true
		}
	}
	return false
}

// TestRuleBreaks shows the check fails when a rule is broken: each case is
// a made-up module whose imports the rules must catch (or let pass).
func TestRuleBreaks(t *testing.T) {
	cases := []struct {
		name string
		deps map[string][]string
		want map[string]int // rule → offences
	}{
		{"clean", map[string][]string{
			"assertions": {"record", "scenario"}, "export/k8s": {"workloads", "guard"},
			"testbed/docker": {"testbed", "guard"}, "targets/bankservice": {"targets/platform"},
		}, map[string]int{}},
		{"export through runner", map[string][]string{"export/k8s": {"runner", "testbed"}},
			map[string]int{"export → runner": 1}},
		{"a subpackage of workloads", map[string][]string{"report": {"workloads/stream", "guard"}},
			map[string]int{"report → workloads": 1}},
		{"testbed to faults and targets", map[string][]string{"testbed/docker": {"faults", "targets/platform"}},
			map[string]int{"testbed → faults": 1, "testbed → targets": 1}},
		{"a target importing the harness", map[string][]string{"targets/platform": {"guard", "clock"}, "targets/bankservice": {"targets/platform", "guard"}},
			map[string]int{"targets → harness packages": 3}},
		{"the schema generator", map[string][]string{"scenario": {"internal/schemagen"}, "internal/schemagen": {"record"}},
			map[string]int{"internal/schemagen → harness packages": 1}},
		{"names that only share a prefix", map[string][]string{"reporting": {"workloads"}, "testbedx": {"faults"}, "assertions": {"workloadsx"}},
			map[string]int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]int{}
			for r, offences := range violations(tc.deps) {
				got[r.String()] = len(offences)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("violations = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNoAGPLInTheHarness: the harness never links k6 (AGPL-3.0); it runs
// k6 as a separate program, and its default path needs none of it.
func TestNoAGPLInTheHarness(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	mods := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		mods[m] = true
	}
	if len(mods) < 10 {
		t.Fatalf("go list named only %d modules: the check checks nothing", len(mods))
	}
	for _, bad := range []string{"go.k6.io/k6", "github.com/grafana/sobek", "github.com/grafana/xk6-dashboard"} {
		if mods[bad] {
			t.Errorf("the harness links %s, which is AGPL-3.0 (or only comes with k6): run k6 as a program instead", bad)
		}
	}
}

// maxCLILines bounds the CLI's own code: commands wire flags and call the
// packages that own each job.
const maxCLILines = 1000

// TestCLIStaysThin counts the non-test lines of cmd/chaosrun's own files.
func TestCLIStaysThin(t *testing.T) {
	files, err := filepath.Glob("../../cmd/chaosrun/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CLI files found: %v", err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(raw, []byte("\n"))
	}
	t.Logf("cmd/chaosrun: %d non-test lines", total)
	if total > maxCLILines {
		t.Errorf("cmd/chaosrun has %d non-test lines, more than %d: move a command's body into the package that owns its job", total, maxCLILines)
	}
}
