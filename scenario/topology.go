package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Edge is one Toxiproxy proxy: the calls of From to one replica of To.
type Edge struct {
	From, To string
	// Replica is the index of To's instance (0 when To has one replica).
	Replica int
	// Proxy is the proxy name: "from->to" when To has one replica, else
	// "from->to.N".
	Proxy string
}

// proxyName names the proxy of from's calls to replica i of to.
func (s *Scenario) proxyName(from, to string, i int) string {
	if max(s.Services[to].Replicas, 1) == 1 {
		return from + "->" + to
	}
	return fmt.Sprintf("%s->%s.%d", from, to, i)
}

// Edges lists every proxy of the topology: for each service in file order,
// for each dependency in listed order, one per replica of the dependency;
// then one in front of each external service (From is LoadName).
func (s *Scenario) Edges() []Edge {
	out := s.dependencyEdges()
	for _, n := range s.ExternalServices() {
		out = append(out, Edge{From: LoadName, To: n, Proxy: LoadName + "->" + n})
	}
	return out
}

// dependencyEdges lists the proxies of the services' dependency edges.
func (s *Scenario) dependencyEdges() []Edge {
	var out []Edge
	for _, from := range s.serviceNames() {
		for _, to := range s.deps(from) {
			callee := s.Services[to]
			if callee == nil || to == from {
				continue
			}
			for i := range max(callee.Replicas, 1) {
				out = append(out, Edge{From: from, To: to, Replica: i, Proxy: s.proxyName(from, to, i)})
			}
		}
	}
	return out
}

// ProxiesFor returns the proxy names a fault edge covers: every replica's
// for "from->to", the one for "from->to.N".
func (s *Scenario) ProxiesFor(edge string) ([]string, error) {
	from, to, replica, allowed, err := s.parseEdge(edge)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w (allowed: %s)", err, allowed)
	}
	var out []string
	for i := range max(s.Services[to].Replicas, 1) {
		if replica < 0 || replica == i {
			out = append(out, s.proxyName(from, to, i))
		}
	}
	extra := s.Services[to].ExtraPorts()
	for _, p := range slices.Clone(out) {
		for _, port := range extra {
			out = append(out, PortProxy(p, port))
		}
	}
	return out, nil
}

// PortProxy names the proxy of an edge's further port: a service that
// listens on several ports is reached through one proxy per port, the
// edge's own for the first.
func PortProxy(proxy string, port int) string { return proxy + ":" + strconv.Itoa(port) }

// ExtraPorts are the ports beyond the first that an imported service
// declares: each gets a proxy of its own on every edge to it.
func (s *Service) ExtraPorts() []int {
	if s == nil || s.Imported == nil || len(s.Imported.Ports) < 2 {
		return nil
	}
	return s.Imported.Ports[1:]
}

// StartOrder lists services so that each comes after what it depends on,
// otherwise in file order.
func (s *Scenario) StartOrder() []string {
	var out []string
	done := map[string]bool{}
	var visit func(name string, depth int)
	visit = func(name string, depth int) {
		if done[name] || depth > len(s.Services) {
			return
		}
		done[name] = true
		for _, dep := range s.startAfter(name) {
			if s.Services[dep] != nil {
				visit(dep, depth+1)
			}
		}
		out = append(out, name)
	}
	for _, name := range s.serviceNames() {
		visit(name, 0)
	}
	return out
}

// LoadDuration is how long load runs.
func (s *Scenario) LoadDuration() time.Duration { return s.Workload.Duration.Std() }

// deps returns what a service depends on; nil for an unknown service.
func (s *Scenario) deps(name string) []string {
	if svc := s.Services[name]; svc != nil {
		return svc.DependsOn
	}
	return nil
}

// StartAfter is what a service waits for before it starts: the services
// of the scenario it depends on and the jobs it waits for. StartOrder
// lists each of them before it.
func (s *Scenario) StartAfter(name string) []string {
	var out []string
	for _, dep := range s.startAfter(name) {
		if s.Services[dep] != nil && dep != name && !slices.Contains(out, dep) {
			out = append(out, dep)
		}
	}
	return out
}

// startAfter is what a service starts after: its dependencies, and the
// jobs it waits for (Imported.After).
func (s *Scenario) startAfter(name string) []string {
	svc := s.Services[name]
	if svc == nil || svc.Imported == nil || len(svc.Imported.After) == 0 {
		return s.deps(name)
	}
	return append(slices.Clone(svc.Imported.After), svc.DependsOn...)
}
