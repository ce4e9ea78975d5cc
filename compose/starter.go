package compose

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/chaosrun/chaosrun/scenario"
)

// Starter is a scaffold for a Compose project: a scenario that names the
// file, and the k6 script it runs.
type Starter struct {
	// Name is the scenario's name; Scenario and Script are the files'
	// contents, ScriptName the script's file name (beside the scenario).
	Name, Scenario, ScriptName, Script string
}

// NewStarter writes a starter scenario for the Compose file at path, which
// the scenario names as rel (relative to where it will be written): load
// on the services nobody depends on, a latency fault on the first
// dependency edge, and assertions to tighten. It reads the file as
// Import does, and gives up when ctx ends. rel must stay inside the
// scenario's folder, as a scenario's compose: must.
func NewStarter(ctx context.Context, path, rel string) (*Starter, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return nil, fmt.Errorf("compose: the scenario would name %s as %s, outside its own folder: write it in the Compose file's folder or one above it (a scenario's compose: must lie inside the scenario's folder)", path, rel)
	}
	data, err := read(ctx, path)
	if err != nil {
		return nil, err
	}
	svcs, err := ImportBytes(path, data, os.Environ())
	if err != nil {
		return nil, err
	}
	if len(svcs) == 0 {
		return nil, fmt.Errorf("compose: %s has no services", path)
	}
	called := map[string]bool{}
	for _, n := range svcs {
		for _, d := range n.Service.DependsOn {
			called[d] = true
		}
	}
	var targets []string
	for _, n := range svcs {
		if !called[n.Name] && n.Service.Port > 0 {
			targets = append(targets, n.Name)
		}
	}
	if len(targets) == 0 {
		targets = []string{svcs[0].Name}
	}
	var from, to string
	for _, n := range svcs {
		if len(n.Service.DependsOn) > 0 && (from == "" || slices.Contains(targets, n.Name) && !slices.Contains(targets, from)) {
			from, to = n.Name, n.Service.DependsOn[0]
		}
	}
	name := scenarioName(path, data)
	st := &Starter{Name: name, ScriptName: name + ".js", Script: script(targets)}
	st.Scenario = scenarioText(name, rel, st.ScriptName, svcs, targets, from, to)
	return st, nil
}

// scenarioName is a scenario name from the project's name: its name:
// (in data, the file's content), else its folder's.
func scenarioName(path string, data []byte) string {
	project := projectName(path)
	if root, err := parse(path, data); err == nil {
		if v := deref(valueOf(root, "name")); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" {
			project = v.Value
		}
	}
	n := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, project)
	n = strings.Trim(n, "-")
	if n == "" {
		n = "compose"
	}
	return n + "-chaos"
}

func scenarioText(name, rel, script string, svcs []scenario.Named, targets []string, from, to string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nname: %s\ndescription: >\n  A starter scenario for %s: tighten its assertions to your SLOs, then\n  switch your protection off (--set SERVICE.env.KEY=VALUE) and see it breach.\n",
		name, filepath.Base(rel))
	fmt.Fprintf(&b, "compose: %s\n", rel)
	b.WriteString("# Each Compose service runs as the file says; an entry here refines one:\n# env (templated: {port}, {instance}, {dep.NAME}), health, metrics, port.\nservices:\n")
	for _, n := range svcs {
		fmt.Fprintf(&b, "  %s: {}   # port %d, health %s\n", n.Name, n.Service.Port, n.Service.Health)
	}
	fmt.Fprintf(&b, "workload:\n  script: %s\n  duration: 60s\n  targets: [%s]\n  params: {RATE: \"50\", PATH: \"/\"}\n", script, strings.Join(targets, ", "))
	window := "whole"
	if from != "" {
		fmt.Fprintf(&b, "faults:\n  - name: slow-%s\n    kind: latency\n    edge: %s->%s   # %s reaches %s through this proxy\n    start: 20s\n    duration: 20s\n    attributes: {latency: 500}\n",
			to, from, to, from, to)
		window = "during slow-" + to
	}
	fmt.Fprintf(&b, "assertions:\n  - name: p99\n    metric: http_req_duration\n    window: %s\n    settle: 2s\n    checks: [\"p(99) < 1s\"]\n", window)
	b.WriteString("  - name: errors\n    metric: http_req_failed\n    checks: [\"rate < 0.01\"]\n")
	return b.String()
}

// script is an open-model GET load on each target.
func script(targets []string) string {
	var b strings.Builder
	b.WriteString("// Open-model GET load on the scenario's targets (chaosrun sets TARGET_<NAME>).\n")
	b.WriteString("//   RATE  requests per second per target (default 50)\n//   PATH  the path asked (default /)\n")
	b.WriteString("import http from 'k6/http';\n\nconst rate = parseInt(__ENV.RATE || '50', 10);\nconst path = __ENV.PATH || '/';\nconst targets = {\n")
	for _, t := range targets {
		fmt.Fprintf(&b, "  %q: __ENV.TARGET_%s,\n", t, strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(t)))
	}
	b.WriteString("};\n\nexport const options = { scenarios: {}, discardResponseBodies: true };\nfor (const name of Object.keys(targets)) {\n")
	b.WriteString("  options.scenarios[name] = {\n    executor: 'constant-arrival-rate', exec: 'get', env: { TARGET: name },\n    rate: rate, timeUnit: '1s', duration: __ENV.DURATION || '60s',\n    preAllocatedVUs: 20, maxVUs: 200, gracefulStop: '5s',\n  };\n}\n\n")
	b.WriteString("export function get() {\n  const name = __ENV.TARGET;\n  http.get(`${targets[name]}${path}`, { tags: { api: name, name: name } });\n}\n")
	return b.String()
}

// existsError says a starter file is there already.
type existsError struct{ path string }

func (e *existsError) Error() string        { return e.path + " exists (--force overwrites it)" }
func (e *existsError) Is(target error) bool { return target == fs.ErrExist }

// Write writes the scenario and its script into folder out and returns
// their paths. A file that exists is left as it is, unless force, with an
// error that is fs.ErrExist.
func (s *Starter) Write(out string, force bool) (scenarioPath, scriptPath string, err error) {
	scenarioPath, scriptPath = filepath.Join(out, s.Name+".yaml"), filepath.Join(out, s.ScriptName)
	for _, p := range []string{scenarioPath, scriptPath} {
		if _, err := os.Stat(p); err == nil && !force {
			return "", "", &existsError{p}
		}
	}
	err = errors.Join(os.MkdirAll(out, 0o755), os.WriteFile(scenarioPath, []byte(s.Scenario), 0o644),
		os.WriteFile(scriptPath, []byte(s.Script), 0o644))
	return scenarioPath, scriptPath, err
}
