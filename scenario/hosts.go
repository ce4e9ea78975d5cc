package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// HealthTCP as a service's health waits for its port to accept and hold a
// connection instead of asking an HTTP path.
const HealthTCP = "tcp"

// Own reports whether the service is the user's own (image: or command:)
// rather than a built-in target (run:).
func (s *Service) Own() bool { return s.Image != "" || len(s.Command) > 0 }

// InstanceName names replica i of service: the service name alone when it
// has one replica, else "name.i".
func (s *Scenario) InstanceName(service string, i int) string {
	if svc := s.Services[service]; svc == nil || max(svc.Replicas, 1) == 1 {
		return service
	}
	return fmt.Sprintf("%s.%d", service, i)
}

// InstancesFor returns the instance names a host fault's host: covers:
// every replica's for "svc", the one for "svc.N".
func (s *Scenario) InstancesFor(host string) ([]string, error) {
	svc, replica, allowed, err := s.parseHost(host)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w (allowed: %s)", err, allowed)
	}
	if replica >= 0 {
		return []string{s.InstanceName(svc, replica)}, nil
	}
	n := max(s.Services[svc].Replicas, 1)
	out := make([]string, n)
	for i := range n {
		out[i] = s.InstanceName(svc, i)
	}
	return out, nil
}

// hostNames lists what host: may name: each service and each replica.
func (s *Scenario) hostNames() []string {
	var out []string
	for _, n := range s.serviceNames() {
		out = append(out, n)
		if r := max(s.Services[n].Replicas, 1); r > 1 {
			out = append(out, fmt.Sprintf("%s.0 to %s.%d", n, n, r-1))
		}
	}
	return out
}

// parseHost splits "svc" or "svc.N"; replica is -1 without .N.
func (s *Scenario) parseHost(host string) (svc string, replica int, allowed string, err error) {
	allowed = allowedList(s.hostNames())
	svc, replica = strings.TrimSpace(host), -1
	if s.Services[svc] == nil {
		if i := strings.LastIndexByte(svc, '.'); i >= 0 {
			n, err := strconv.Atoi(svc[i+1:])
			if err != nil || n < 0 {
				return "", 0, allowed, fmt.Errorf("host %q: replica index %q is not a number", host, svc[i+1:])
			}
			svc, replica = svc[:i], n
		}
	}
	if s.Services[svc] == nil {
		return "", 0, allowed, fmt.Errorf("host %q: unknown service %q", host, svc)
	}
	if n := max(s.Services[svc].Replicas, 1); replica >= n {
		return "", 0, allowed, fmt.Errorf("host %q: replica %d out of range: %s has %d replica(s)", host, replica, svc, n)
	}
	return svc, replica, "", nil
}

// ownService checks a service given as image: and/or command: instead of
// run:, and reports whether it is one.
func (v *validator) ownService(p string, svc *Service) bool {
	if svc.External != "" {
		return true // checked by external
	}
	if !svc.Own() {
		if v.ok(p+".port") && svc.Port != 0 {
			v.errf(p+".port", "", "port is for your own service (image: or command:); run: targets pick their port")
		}
		return false
	}
	if svc.Run != "" {
		v.errf(p+".run", "run: (a built-in target), or image: and/or command: (your own service)", "run: %q and image:/command: exclude each other", svc.Run)
	}
	if v.ok(p+".image") && svc.Image != "" {
		if strings.ContainsAny(svc.Image, " \t") {
			v.errf(p+".image", "a local image reference, e.g. my-service:dev", "invalid image %q", svc.Image)
		}
		if v.ok(p+".port") && svc.Port == 0 && !svc.ByName() {
			v.missing(p+".port", "1 to 65535: the port the image's service listens on")
		}
	}
	if v.ok(p+".port") && (svc.Port < 0 || svc.Port > 65535) {
		v.errf(p+".port", "1 to 65535", "port %d out of range", svc.Port)
	}
	if v.ok(p+".command") && len(svc.Command) > 0 && strings.TrimSpace(svc.Command[0]) == "" {
		v.errf(p+".command", "a program and its arguments, e.g. [redis-server, --port, \"{port}\"]", "empty program name")
	}
	return true
}

// isHostKind applies Options.HostKind, defaulting to the host_ prefix.
func (v *validator) isHostKind(kind string) bool {
	if v.opts.HostKind != nil {
		return v.opts.HostKind(kind)
	}
	return strings.HasPrefix(kind, "host_")
}

// hostFault checks a fault that names a host or has a host kind, and
// reports whether it is one (then its edge is not checked).
func (v *validator) hostFault(p string, f *Fault) bool {
	hostKind := f.Kind != "" && v.isHostKind(f.Kind)
	if f.Host == "" && !hostKind {
		return false
	}
	if !hostKind && v.ok(p+".kind") && f.Kind != "" {
		v.errf(p+".host", "edge: for this kind", "fault kind %q acts on an edge, not a host", f.Kind)
		return true
	}
	if f.Edge != "" && v.ok(p+".edge") {
		v.errf(p+".edge", "host: for host faults", "fault kind %q acts on a host, not an edge", f.Kind)
	}
	if !v.ok(p+".host") || !v.ok("services") {
		return true
	}
	if f.Host == "" {
		v.missing(p+".host", allowedList(v.s.hostNames()))
		return true
	}
	if svc, _, allowed, err := v.s.parseHost(f.Host); err != nil {
		v.errf(p+".host", allowed, "%s", err.Error())
	} else if v.s.Services[svc].External != "" {
		v.errf(p+".host", "services the run starts", "host %q: %s is external; the run does not start it, so a host fault cannot act on it (fault the edge %s->%s instead)", f.Host, svc, LoadName, svc)
	}
	return true
}
