package compose

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/chaosrun/chaosrun/scenario"
)

// loadProject is compose-go's LoadWithContext but for its search of
// dependency cycles, which walks every path from every service (a
// 2,000-service chain takes it seconds; a 10,000 one, minutes):
// compose-go's consistency checks run on the project without its
// depends_on, and checkDependencies does the rest in linear time.
func loadProject(ctx context.Context, details types.ConfigDetails, opt func(*loader.Options)) (*types.Project, error) {
	dict, err := loader.LoadModelWithContext(ctx, details, opt)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	noDeps := clone(dict).(map[string]any)
	if svcs, ok := noDeps["services"].(map[string]any); ok {
		for _, s := range svcs {
			if m, ok := s.(map[string]any); ok {
				delete(m, "depends_on")
			}
		}
	}
	if _, err := loader.ModelToProject(noDeps, loader.ToOptions(&details, []func(*loader.Options){opt}), details); err != nil {
		return nil, err
	}
	return loader.ModelToProject(dict, loader.ToOptions(&details, []func(*loader.Options){opt, func(o *loader.Options) {
		o.SkipConsistencyCheck = true
	}}), details)
}

// clone copies a loaded model deeply.
func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = clone(e)
		}
		return out
	}
	return v
}

// checkDependencies refuses a dependency on a service the project does
// not define and a dependency cycle, in time linear in services and
// edges.
func (ss *sources) checkDependencies(proj *types.Project) scenario.Errors {
	var errs scenario.Errors
	names := ss.serviceOrder(proj)
	for _, name := range names {
		for _, dep := range sortedDeps(proj.Services[name]) {
			_, on := proj.Services[dep]
			_, off := proj.DisabledServices[dep]
			if !on && !off && proj.Services[name].DependsOn[dep].Required {
				errs = append(errs, ss.errAt("services."+name+".depends_on", "a service of the project",
					fmt.Sprintf("Compose: service %q depends on undefined service %q", name, dep), "services", name, "depends_on"))
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if cycle := findCycle(proj, names); cycle != nil {
		return scenario.Errors{ss.errAt("services."+cycle[0]+".depends_on", "",
			"Compose: dependency cycle detected: "+strings.Join(cycle, " -> "), "services", cycle[0], "depends_on")}
	}
	return nil
}

func sortedDeps(c types.ServiceConfig) []string {
	deps := make([]string, 0, len(c.DependsOn))
	for d := range c.DependsOn {
		deps = append(deps, d)
	}
	slices.Sort(deps)
	return deps
}

// findCycle is a dependency cycle (its first service repeated at its
// end), or nil: an iterative depth-first search, each service and edge
// visited once.
func findCycle(proj *types.Project, names []string) []string {
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(names))
	type frame struct {
		name string
		deps []string
	}
	for _, root := range names {
		if color[root] != white {
			continue
		}
		stack := []frame{{root, sortedDeps(proj.Services[root])}}
		color[root] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if len(top.deps) == 0 {
				color[top.name] = black
				stack = stack[:len(stack)-1]
				continue
			}
			dep := top.deps[0]
			top.deps = top.deps[1:]
			if _, ok := proj.Services[dep]; !ok {
				continue
			}
			switch color[dep] {
			case grey:
				i := slices.IndexFunc(stack, func(f frame) bool { return f.name == dep })
				var cycle []string
				for _, f := range stack[i:] {
					cycle = append(cycle, f.name)
				}
				return append(cycle, dep)
			case white:
				color[dep] = grey
				stack = append(stack, frame{dep, sortedDeps(proj.Services[dep])})
			}
		}
	}
	return nil
}
