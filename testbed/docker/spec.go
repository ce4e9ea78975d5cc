package docker

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/scenario"
)

// spec is one container to run.
type spec struct {
	name, image string
	health      scenario.Health
	token       string // sent as the basic-auth password of health checks
	port        int
	// extraPorts are more container ports published on 127.0.0.1 (a
	// separate metrics port, the proxies in front of external services).
	extraPorts      []int
	entrypoint, cmd []string
	env             map[string]string
	// nets are the networks the container joins; nil is the run's
	// network under the instance's alias.
	nets []netAttach
	// hostGateway maps host.docker.internal to the engine's host.
	hostGateway bool
	// compose is what a Compose service's description adds; nil for
	// every other service.
	compose *composeExtras
	// job: the container runs to completion (exit 0) before the services
	// that start after it; the run does not count its exit as a death.
	job bool
}

// serviceSpec is replica i of a service: a built-in target served by the
// chaosrun image (its admin endpoints guarded by the run's token, since it
// listens on every interface of its container), or the user's own image.
func (t *Testbed) serviceSpec(sc *scenario.Scenario, name string, i int, deps map[string][]string, token string) (spec, error) {
	svc := sc.Services[name]
	s := spec{name: sc.InstanceName(name, i), health: svc.Health, port: servicePort(svc)}
	if s.health.IsZero() {
		s.health.Check = "/healthz"
	}
	if mp := svc.MetricsPort(); mp > 0 && mp != s.port {
		s.extraPorts = append(s.extraPorts, mp)
	}
	vars := scenario.TemplateVars{Port: s.port, Instance: s.name, Deps: deps}
	env, err := expandEnv(svc.Env, vars)
	if err != nil {
		return spec{}, fmt.Errorf("testbed: docker: %s: %w", s.name, err)
	}
	if s.health.Command, err = scenario.ExpandAll(s.health.Command, vars); err != nil {
		return spec{}, fmt.Errorf("testbed: docker: %s: health: %w", s.name, err)
	}
	s.env = env
	if svc.Image == "" {
		s.image = t.Image
		s.cmd = serveArgs(svc, deps)
		s.env[guard.AdminTokenEnv] = token
		return s, nil
	}
	s.image = t.imageFor(name, svc)
	if im := svc.Imported; im != nil {
		// A Compose service runs as its file says, its environment as it
		// is: it reaches its dependencies under their names.
		s.entrypoint, s.cmd, s.job = im.Entrypoint, im.Args, im.Job
		if proj, cfg, ok := projectOf(svc, name); ok {
			t.mu.Lock()
			vols := t.volumes
			t.mu.Unlock()
			x, err := newComposeExtras(proj, cfg, vols)
			if err != nil {
				return spec{}, fmt.Errorf("testbed: docker: %w", err)
			}
			s.compose = &x
		}
		return s, nil
	}
	// The user's own image keeps its command; it learns its dependencies
	// and config from the environment (CHAOSRUN_*, then its own env:).
	own := map[string]string{"CHAOSRUN_INSTANCE": s.name, "CHAOSRUN_PORT": strconv.Itoa(s.port)}
	for dep, addrs := range deps {
		own["CHAOSRUN_DEP_"+envName(dep)] = strings.Join(addrs, ",")
	}
	for k, v := range svc.Config {
		own["CHAOSRUN_CONFIG_"+envName(k)] = v
	}
	for k, v := range env {
		own[k] = v
	}
	s.env = own
	return s, nil
}

// expandEnv expands the templates of a service's env.
func expandEnv(env map[string]string, vars scenario.TemplateVars) (map[string]string, error) {
	out := make(map[string]string, len(env))
	for k, v := range env {
		val, err := scenario.Expand(v, vars)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", k, err)
		}
		out[k] = val
	}
	return out, nil
}
