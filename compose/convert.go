package compose

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/compose-spec/compose-go/v2/types"
	"gopkg.in/yaml.v3"

	"github.com/chaosrun/chaosrun/scenario"
)

// convert turns one Compose service into a scenario service.
func convert(file string, root *yaml.Node, name string, c types.ServiceConfig) (*scenario.Service, scenario.Errors) {
	at := keyNode(root, "services", name)
	im := &scenario.Imported{File: file, Entrypoint: c.Entrypoint, Args: c.Command}
	if at != nil {
		im.Line, im.Col = at.Line, at.Column
	}
	var errs scenario.Errors
	errAt := func(key, allowed, format string, args ...any) {
		pos := at
		if k := keyNode(root, "services", name, key); k != nil {
			pos = k
		}
		if pos == nil {
			pos = keyNode(root, fileField) // a service its name cannot find (brought by a merge key)
		}
		e := &scenario.Error{File: file, Line: 1, Col: 1, Field: "services." + name + "." + key, Msg: fmt.Sprintf(format, args...), Allowed: allowed}
		if pos != nil {
			e.Line, e.Col = pos.Line, pos.Column
		}
		errs = append(errs, e)
	}
	svc := &scenario.Service{Image: c.Image, Imported: im, Replicas: 1}
	if c.Image == "" {
		errAt("image", "a local image: nothing is pulled or built (build it first, e.g. with docker build -t NAME .)", "missing: chaosrun runs a Compose service from its image")
	}
	svc.Port = port(c, errAt)
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
		if d.Condition == types.ServiceConditionCompletedSuccessfully {
			errAt("depends_on", "service_started, service_healthy", "%s: condition %s is not supported (every service runs for the whole run)", dep, d.Condition)
		}
		svc.DependsOn = append(svc.DependsOn, dep)
	}
	slices.Sort(svc.DependsOn)
	svc.Health = health(c.HealthCheck, errAt)
	return svc, errs
}

// port is the service's port: the first of ports: (its container side),
// else of expose:. The scenario's port: may choose another.
func port(c types.ServiceConfig, errAt func(key, allowed, format string, args ...any)) int {
	for _, p := range c.Ports {
		if p.Protocol != "" && p.Protocol != "tcp" {
			errAt("ports", "tcp", "protocol %s is not supported: Toxiproxy proxies TCP", p.Protocol)
			continue
		}
		return int(p.Target)
	}
	for _, e := range c.Expose {
		n, err := strconv.Atoi(e)
		if err != nil || n < 1 || n > 65535 {
			errAt("expose", "a port number, e.g. \"6379\"", "expose %q is not one port", e)
			continue
		}
		return n
	}
	return 0
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
