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

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/chaosrun/chaosrun/scenario"
)

// Starter is a scaffold for a Compose project: a scenario on the native
// engine that names the project's files.
type Starter struct {
	// Name is the scenario's name; Scenario the file's content.
	Name, Scenario string
}

// NewStarter writes a starter scenario for the Compose project at paths
// (merged in order, as Import does), which the scenario names as rels
// (relative to where it will be written): load on the services nobody
// depends on (their first port), a latency fault on the busiest edge (to
// the dependency most depended on), and assertions to tighten. It gives up
// when ctx ends. Each of rels must stay inside the scenario's folder, as a
// scenario's compose: must.
func NewStarter(ctx context.Context, paths, rels []string, o Options) (*Starter, error) {
	for i, rel := range rels {
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return nil, fmt.Errorf("compose: the scenario would name %s as %s, outside its own folder: write it in the Compose file's folder or one above it (a scenario's compose: must lie inside the scenario's folder)", paths[i], rel)
		}
	}
	svcs, err := Import(ctx, paths, o)
	if err != nil {
		return nil, err
	}
	if len(svcs) == 0 {
		return nil, fmt.Errorf("compose: %s has no services (with the profiles enabled)", strings.Join(paths, ", "))
	}
	targets := loadTargets(svcs)
	if len(targets) == 0 {
		return nil, fmt.Errorf("compose: no service of %s declares a port (ports: or expose:) to put load on", strings.Join(paths, ", "))
	}
	from, to := busiestEdge(svcs, targets)
	name := scenarioName(svcs)
	return &Starter{Name: name, Scenario: scenarioText(name, rels, o.Profiles, svcs, targets, from, to)}, nil
}

// loadTargets are the services nobody depends on that declare a port;
// when every such service depends on nothing either, the first service
// with a port.
func loadTargets(svcs []scenario.Named) []string {
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
		for _, n := range svcs {
			if n.Service.Port > 0 {
				return []string{n.Name}
			}
		}
	}
	return targets
}

// busiestEdge is from->to where to is the dependency most depended on
// (the first in the file's order on a tie) and from the first of its
// dependents, a load target when one is; "" when there is no edge.
func busiestEdge(svcs []scenario.Named, targets []string) (from, to string) {
	count := map[string]int{}
	for _, n := range svcs {
		for _, d := range n.Service.DependsOn {
			count[d]++
		}
	}
	for _, n := range svcs {
		if count[n.Name] > count[to] {
			to = n.Name
		}
	}
	if to == "" {
		return "", ""
	}
	for _, n := range svcs {
		if slices.Contains(n.Service.DependsOn, to) && (from == "" || slices.Contains(targets, n.Name) && !slices.Contains(targets, from)) {
			from = n.Name
		}
	}
	return from, to
}

// scenarioName is a scenario name from the project's name.
func scenarioName(svcs []scenario.Named) string {
	project := ""
	if p, ok := svcs[0].Service.Imported.Project.(*types.Project); ok {
		project = p.Name
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

func scenarioText(name string, rels, profiles []string, svcs []scenario.Named, targets []string, from, to string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nname: %s\ndescription: >\n  A starter scenario for %s: tighten its assertions to your SLOs, then\n  switch your protection off (--set SERVICE.env.KEY=VALUE) and see it breach.\n",
		name, strings.Join(rels, " + "))
	if len(profiles) > 0 {
		fmt.Fprintf(&b, "# Written with --profile %s: validate and run with the same.\n", strings.Join(profiles, " --profile "))
	}
	if len(rels) == 1 {
		fmt.Fprintf(&b, "compose: %s\n", rels[0])
	} else {
		fmt.Fprintf(&b, "compose: [%s]\n", strings.Join(rels, ", "))
	}
	b.WriteString("# Each Compose service runs as the files say; an entry here refines one:\n# env (templated: {port}, {instance}, {dep.NAME}), health, metrics, port.\nservices:\n")
	for _, n := range svcs {
		port := fmt.Sprint(n.Service.Port)
		if n.Service.Port == 0 {
			port = "from the image's EXPOSE"
		}
		fmt.Fprintf(&b, "  %s: {}   # port %s, health %s, replicas %d\n", n.Name, port, strings.ReplaceAll(n.Service.Health.String(), "{{", "{"), n.Service.Replicas)
	}
	b.WriteString("workload:\n  engine: native\n  duration: 60s\n  streams:\n")
	for _, t := range targets {
		fmt.Fprintf(&b, "    # GET / on %s at 50/s: set the path and rate your users see.\n    %s:\n      target: %s\n      path: /\n      timeout: 5s\n      tags: {api: %s, name: %s}\n      arrival: {rate: 50}\n", t, t, t, t, t)
	}
	window := "whole"
	if from != "" {
		fmt.Fprintf(&b, "faults:\n  - name: slow-%s\n    kind: latency\n    edge: %s->%s   # %s reaches %s through this proxy\n    start: 20s\n    duration: 20s\n    attributes: {latency: 500}\n",
			to, from, to, from, to)
		window = "during slow-" + to
	}
	fmt.Fprintf(&b, "assertions:\n  - name: p99\n    metric: http_req_duration\n    window: %s\n    settle: 2s\n    checks: [\"p(99) < 1s\"]\n", window)
	b.WriteString("  - name: errors\n    metric: http_req_failed\n    window: whole\n    checks: [\"rate < 0.01\"]\n")
	return b.String()
}

// existsError says a starter file is there already.
type existsError struct{ path string }

func (e *existsError) Error() string        { return e.path + " exists (--force overwrites it)" }
func (e *existsError) Is(target error) bool { return target == fs.ErrExist }

// Write writes the scenario into folder out and returns its path. A file
// that exists is left as it is, unless force, with an error that is
// fs.ErrExist.
func (s *Starter) Write(out string, force bool) (string, error) {
	path := filepath.Join(out, s.Name+".yaml")
	if _, err := os.Stat(path); err == nil && !force {
		return "", &existsError{path}
	}
	err := errors.Join(os.MkdirAll(out, 0o755), os.WriteFile(path, []byte(s.Scenario), 0o644))
	return path, err
}
