package docker

import (
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/chaosrun/chaosrun/scenario"
)

// netAttach is one network a container joins, under these aliases.
type netAttach struct {
	name    string
	aliases []string
}

// wiring is how the run's containers reach each other. Built-in targets
// and image: services share the run's network and are given Toxiproxy's
// address of each edge. A service that reaches its dependencies by name (a
// Compose service) lives on networks of its own, on which each dependency's
// name is an alias of the Toxiproxy container, whose proxy for the edge
// listens on the dependency's port at Toxiproxy's address on that network:
// the application's configuration ("redis:6379") is unchanged. Two
// dependencies on the same port go on different networks of the caller,
// so that each name has an address of its own.
type wiring struct {
	main string
	// nets lists each by-name service's networks, its home first.
	nets map[string][]netAttach
	// depNet maps caller → dependency → the network on which the
	// dependency's name is Toxiproxy.
	depNet map[string]map[string]string
	// toxi are the networks Toxiproxy joins, with its aliases on each.
	toxi []netAttach
	// front maps each external service to the port, inside Toxiproxy's
	// container, of its proxy workload->NAME (published to the host).
	front map[string]int
}

// planWiring plans the networks of a run named runID.
func planWiring(sc *scenario.Scenario, runID string, edges []scenario.Edge) *wiring {
	w := &wiring{main: "chaosrun-" + runID, nets: map[string][]netAttach{}, depNet: map[string]map[string]string{}, front: map[string]int{}}
	w.toxi = []netAttach{{name: w.main, aliases: []string{"toxiproxy"}}}
	for _, name := range sc.StartOrder() {
		svc := sc.Services[name]
		if !svc.ByName() {
			continue
		}
		home := w.main + "-" + name
		w.nets[name] = []netAttach{{name: home}}
		w.depNet[name] = map[string]string{}
		toxiAliases := map[string][]string{home: nil}
		order := []string{home}
		used := map[string][]int{} // network → dependency ports on it
		for _, dep := range svc.DependsOn {
			port := servicePort(sc.Services[dep])
			k, net := 0, home
			for slices.Contains(used[net], port) {
				k++
				net = home + "-" + strconv.Itoa(k)
			}
			if _, ok := toxiAliases[net]; !ok {
				order = append(order, net)
				w.nets[name] = append(w.nets[name], netAttach{name: net})
			}
			used[net] = append(used[net], port)
			toxiAliases[net] = append(toxiAliases[net], dep)
			w.depNet[name][dep] = net
		}
		for _, n := range order {
			w.toxi = append(w.toxi, netAttach{name: n, aliases: toxiAliases[n]})
		}
	}
	next := proxyBasePort + len(edges)
	for _, name := range sc.ExternalServices() {
		w.front[name] = next
		next++
	}
	return w
}

// networks lists every network of the run, the run's own first.
func (w *wiring) networks() []string {
	out := make([]string, 0, len(w.toxi))
	for _, n := range w.toxi {
		out = append(out, n.name)
	}
	return out
}

// attach is where an instance of service lives.
func (w *wiring) attach(service, instance string) []netAttach {
	if nets, ok := w.nets[service]; ok {
		return nets
	}
	return []netAttach{{name: w.main, aliases: []string{alias(instance)}}}
}

// upstream is where Toxiproxy reaches replica i of service: by name on the
// run's network, by container name on a by-name service's own, or the
// address of an external one.
func (w *wiring) upstream(sc *scenario.Scenario, runID, service string, i int) string {
	svc := sc.Services[service]
	if svc.External != "" {
		return containerSide(svc.External)
	}
	host := alias(sc.InstanceName(service, i))
	if svc.ByName() {
		host = ctrName(runID, host)
	}
	return net.JoinHostPort(host, strconv.Itoa(servicePort(svc)))
}

// containerName is the name of an instance's container.
func ctrName(runID, alias string) string { return "chaosrun-" + runID + "-" + alias }

// hostGateway is the name containers reach this machine by (Toxiproxy's
// container maps it to the engine's host gateway).
const hostGateway = "host.docker.internal"

// containerSide rewrites an external address on this machine's loopback
// to the host gateway, which is how a container reaches it (the service
// must then listen on an address the gateway reaches, not 127.0.0.1 only).
func containerSide(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	ip, err := netip.ParseAddr(host)
	if strings.EqualFold(host, "localhost") || err == nil && ip.IsLoopback() {
		return net.JoinHostPort(hostGateway, port)
	}
	return addr
}
