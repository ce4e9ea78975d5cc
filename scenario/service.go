package scenario

import (
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// LoadName is the load's name in the edges of external services:
// "workload->api" is the proxy in front of the external service api.
const LoadName = "workload"

// DefaultMetricsPath is where a service serves its metrics by default.
const DefaultMetricsPath = "/metrics"

// Health is how a testbed knows an instance is ready: Check (an HTTP path
// or "tcp") or Command (a program and its arguments, ready on exit 0).
type Health struct {
	Check   string
	Command []string
}

// IsZero reports whether no health was given.
func (h Health) IsZero() bool { return h.Check == "" && len(h.Command) == 0 }

// IsTCP reports whether readiness is the port accepting a connection.
func (h Health) IsTCP() bool { return h.Check == HealthTCP }

// String is the check, or the command joined by spaces.
func (h Health) String() string {
	if len(h.Command) > 0 {
		return strings.Join(h.Command, " ")
	}
	return h.Check
}

// MarshalYAML writes the check as a string, the command as a list.
func (h Health) MarshalYAML() (any, error) {
	if len(h.Command) > 0 {
		return h.Command, nil
	}
	return h.Check, nil
}

// decodeNode reads a path or "tcp" (a string) or a command (a list).
func (h *Health) decodeNode(d *decoder, n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.ScalarNode:
		d.value(n, reflect.ValueOf(&h.Check).Elem(), path, false)
	case yaml.SequenceNode:
		d.value(n, reflect.ValueOf(&h.Command).Elem(), path, false)
	default:
		d.bad(n, path, healthAllowed, "want a string or a list, got %s", describe(n))
	}
}

const healthAllowed = "a path starting with /, tcp, or a command as a list, e.g. [redis-cli, -p, \"{port}\", ping]"

// Metrics is where a service serves Prometheus metrics.
type Metrics struct {
	// Path is the page's path; default /metrics.
	Path string `yaml:"path,omitempty" json:"path,omitempty" jsonschema:"pattern=^/"`
	// Port is the port it is served on; default the service's port.
	Port int `yaml:"port,omitempty" json:"port,omitempty" jsonschema:"minimum=1,maximum=65535"`
}

// MetricsPath is the service's metrics path.
func (s *Service) MetricsPath() string {
	if s.Metrics != nil && s.Metrics.Path != "" {
		return s.Metrics.Path
	}
	return DefaultMetricsPath
}

// MetricsPort is the service's metrics port when it is not the service's
// own; 0 when it is.
func (s *Service) MetricsPort() int {
	if s.Metrics != nil {
		return s.Metrics.Port
	}
	return 0
}

// Imported is what a service described in another file (a Compose file)
// brings: it runs under its own name, reaching its dependencies by theirs
// (each resolves to the edge's proxy), with the image's entrypoint and
// command as the file says.
type Imported struct {
	// File, Line and Col are where the file describes the service.
	File      string
	Line, Col int
	// Entrypoint and Args replace the image's when not nil.
	Entrypoint, Args []string
	// Project is the whole project the file describes, as its importer
	// loaded it (for a Compose file, compose-go's *types.Project, every
	// key kept), shared by all its services. It is opaque here: the
	// testbed that runs the service reads it; the service's name in it is
	// the scenario's.
	Project any
	// After are services this one starts after without depending on them
	// through an edge: jobs it waits for to finish (exit 0) first.
	After []string
	// Job: the service runs to completion (exit 0) before those that
	// start after it, rather than for the whole run.
	Job bool
	// Ports are the TCP ports the service listens on in its container, as
	// the file declares them (ports:, expose:), first the one the harness
	// reaches; empty when the file declares none (the testbed then reads
	// the image's EXPOSE).
	Ports []int
}

// ByName reports whether the service reaches its dependencies under their
// names (a Compose service) rather than through addresses it is given.
func (s *Service) ByName() bool { return s.Imported != nil }

// ExternalServices lists the external services in file order.
func (s *Scenario) ExternalServices() []string {
	var out []string
	for _, n := range s.serviceNames() {
		if s.Services[n].External != "" {
			out = append(out, n)
		}
	}
	return out
}

// serviceExtras checks what a service adds to run:, image: and command:
// — env, templates, health, metrics, external.
func (v *validator) serviceExtras(p, name string, svc *Service) {
	if name == LoadName {
		v.keyErrf(p, "any other name", "%q is reserved: it names the load in edges like workload->api", name)
	}
	for _, k := range sortedKeys(svc.Env) {
		kp := p + ".env." + k
		if !envNamePattern.MatchString(k) {
			v.keyErrf(kp, "letters, digits and _, not starting with a digit", "invalid environment variable name %q", k)
		}
		if svc.Run != "" && usesTemplate(svc.Env[k], tmplPort) {
			v.errf(kp, "{instance}, {dep.NAME}", "a built-in target (run:) picks its own port: {port} is not known before it listens")
			continue
		}
		v.template(kp, svc.Env[k], svc.DependsOn)
	}
	for i, a := range svc.Command {
		v.template(fmt.Sprintf("%s.command[%d]", p, i), a, svc.DependsOn)
	}
	v.health(p+".health", svc)
	if m := svc.Metrics; m != nil && v.ok(p+".metrics") {
		if v.ok(p+".metrics.path") && m.Path != "" && !strings.HasPrefix(m.Path, "/") {
			v.errf(p+".metrics.path", "a path starting with /", "invalid metrics path %q", m.Path)
		}
		if v.ok(p+".metrics.port") && (m.Port < 0 || m.Port > 65535) {
			v.errf(p+".metrics.port", "1 to 65535", "port %d out of range", m.Port)
		}
	}
	if svc.External != "" && v.ok(p+".external") {
		v.external(p, svc)
	}
	if svc.ByName() {
		v.byNameChecks(p, svc)
	}
}

// template reports a value whose templates the service cannot expand.
func (v *validator) template(path, val string, deps []string) {
	if !v.ok(path) {
		return
	}
	if err := checkTemplate(val, deps); err != nil {
		v.errf(path, templateAllowed(deps), "%s", err.Error())
	}
}

func (v *validator) health(p string, svc *Service) {
	h := svc.Health
	if !v.ok(p) || h.IsZero() {
		return
	}
	if len(h.Command) > 0 {
		if strings.TrimSpace(h.Command[0]) == "" {
			v.errf(p, healthAllowed, "empty program name")
		}
		for i, a := range h.Command {
			v.template(fmt.Sprintf("%s[%d]", p, i), a, svc.DependsOn)
		}
		return
	}
	if !h.IsTCP() && !strings.HasPrefix(h.Check, "/") {
		v.errf(p, healthAllowed, "health must be a path starting with /, tcp or a command, got %q", h.Check)
	}
}

// external checks an already-running service: host:port, nothing to start.
func (v *validator) external(p string, svc *Service) {
	host, port, err := net.SplitHostPort(svc.External)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		v.errf(p+".external", "host:port, e.g. 127.0.0.1:8080 or staging.internal:443", "invalid address %q", svc.External)
	}
	for _, f := range []struct {
		key string
		set bool
	}{{"run", svc.Run != ""}, {"image", svc.Image != ""}, {"command", len(svc.Command) > 0},
		{"env", len(svc.Env) > 0}, {"config", len(svc.Config) > 0}, {"depends_on", len(svc.DependsOn) > 0},
		{"port", svc.Port != 0}, {"replicas", svc.Replicas > 1}} {
		if f.set {
			v.keyErrf(p+"."+f.key, "health, metrics", "an external service is not started by the run: %s does not apply", f.key)
		}
	}
	if svc.Imported != nil {
		v.keyErrf(p+".external", "", "a Compose service runs on the testbed; it cannot be external")
	}
	if len(svc.Health.Command) > 0 && v.ok(p+".health") {
		v.errf(p+".health", "a path starting with /, or tcp", "an external service's health is checked from here: a path or tcp, not a command")
	}
}

// externalEdges lists the edges of the proxies in front of external
// services.
func (s *Scenario) externalEdges() []string {
	var out []string
	for _, n := range s.ExternalServices() {
		out = append(out, LoadName+"->"+n)
	}
	return out
}

// isExternalEdge reports whether from->to is the proxy in front of an
// external service.
func (s *Scenario) isExternalEdge(from, to string) bool {
	svc := s.Services[to]
	return from == LoadName && svc != nil && svc.External != ""
}
