package compose

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/chaosrun/chaosrun/scenario"
)

// maxExposeRange bounds the ports one expose: range brings.
const maxExposeRange = 64

// convert turns one service of the loaded project into a scenario
// service; the project itself rides along, every key kept.
func (ss *sources) convert(proj *types.Project, name string) (*scenario.Service, scenario.Errors) {
	c := proj.Services[name]
	im := &scenario.Imported{File: ss.list[0].file, Entrypoint: c.Entrypoint, Args: c.Command, Project: proj}
	if file, at := ss.first("services", name); at != nil {
		im.File, im.Line, im.Col = file, at.Line, at.Column
	}
	var errs scenario.Errors
	errAt := func(key, allowed, format string, args ...any) {
		errs = append(errs, ss.errAt("services."+name+"."+key, allowed, fmt.Sprintf(format, args...), "services", name, key))
	}
	svc := &scenario.Service{Image: c.Image, Imported: im, Replicas: replicas(c)}
	if c.Image == "" && c.Build != nil {
		svc.Image = proj.Name + "-" + name // as Compose names what it builds
	}
	if svc.Image == "" {
		errAt("image", "image:, or build: for an image built from the project", "missing: the service has neither an image nor a build")
	}
	im.Ports = ports(c, errAt)
	if len(im.Ports) > 0 {
		svc.Port = im.Ports[0]
	}
	for k, v := range c.Environment {
		if v == nil {
			continue // unset in the environment: Compose leaves it out too
		}
		if svc.Env == nil {
			svc.Env = map[string]string{}
		}
		svc.Env[k] = scenario.EscapeTemplate(*v)
	}
	for dep, d := range c.DependsOn {
		_, enabled := proj.Services[dep]
		switch {
		case !enabled:
		case d.Condition == types.ServiceConditionCompletedSuccessfully:
			im.After = append(im.After, dep) // a job it waits for: no edge
		default:
			svc.DependsOn = append(svc.DependsOn, dep) // an edge, with its proxy
		}
	}
	slices.Sort(svc.DependsOn)
	slices.Sort(im.After)
	im.Job = isJob(proj, name)
	svc.Health = health(c.HealthCheck, errAt)
	return svc, errs
}

// replicas is deploy.replicas, else scale, else 1.
func replicas(c types.ServiceConfig) int {
	switch {
	case c.Deploy != nil && c.Deploy.Replicas != nil:
		return max(*c.Deploy.Replicas, 1)
	case c.Scale != nil:
		return max(*c.Scale, 1)
	}
	return 1
}

// ports are the TCP ports the service listens on in its container: the
// targets of ports:, then expose:, each once, in the file's order. A
// port of another protocol stays in the project (the container publishes
// it) but has no proxy: Toxiproxy proxies TCP.
func ports(c types.ServiceConfig, errAt func(key, allowed, format string, args ...any)) []int {
	var out []int
	add := func(n int) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, p := range c.Ports {
		if (p.Protocol == "" || p.Protocol == "tcp") && p.Target > 0 && p.Target <= 65535 {
			add(int(p.Target))
		}
	}
	for _, e := range c.Expose {
		spec, proto, _ := strings.Cut(e, "/")
		if proto != "" && proto != "tcp" {
			continue
		}
		lo, hi, ok := portRange(spec)
		if !ok {
			errAt("expose", "a port or a range, e.g. \"6379\" or \"8000-8010\"", "expose %q is not a port", e)
			continue
		}
		for n := lo; n <= hi && n < lo+maxExposeRange; n++ {
			add(n)
		}
	}
	return out
}

// portRange reads "8080" or "8000-8010".
func portRange(s string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err := strconv.Atoi(a)
	if err != nil || lo < 1 || lo > 65535 {
		return 0, 0, false
	}
	if !isRange {
		return lo, lo, true
	}
	hi, err = strconv.Atoi(b)
	if err != nil || hi < lo || hi > 65535 {
		return 0, 0, false
	}
	return lo, hi, true
}

// health is the service's readiness from its healthcheck: its test as a
// command run in the container, else the port accepting a connection.
func health(h *types.HealthCheckConfig, errAt func(key, allowed, format string, args ...any)) scenario.Health {
	tcp := scenario.Health{Check: scenario.HealthTCP}
	if h == nil || h.Disable || len(h.Test) == 0 {
		return tcp
	}
	escape := func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = scenario.EscapeTemplate(a)
		}
		return out
	}
	switch h.Test[0] {
	case "NONE":
		return tcp
	case "CMD":
		if len(h.Test) > 1 {
			return scenario.Health{Command: escape(h.Test[1:])}
		}
	case "CMD-SHELL":
		if len(h.Test) == 2 {
			return scenario.Health{Command: escape([]string{"/bin/sh", "-c", h.Test[1]})}
		}
	}
	errAt("healthcheck", "test: [CMD, program, args…], [CMD-SHELL, \"command\"] or a command string", "test %q is not a command", h.Test)
	return tcp
}

// isJob reports whether another service waits for name to complete
// (depends_on with condition service_completed_successfully).
func isJob(proj *types.Project, name string) bool {
	for _, other := range proj.Services {
		if d, ok := other.DependsOn[name]; ok && d.Condition == types.ServiceConditionCompletedSuccessfully {
			return true
		}
	}
	return false
}
