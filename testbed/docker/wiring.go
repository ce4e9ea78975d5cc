package docker

import (
	"context"
	"fmt"
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
			ports := append([]int{servicePort(sc.Services[dep])}, sc.Services[dep].ExtraPorts()...)
			k, net := 0, home
			for slices.ContainsFunc(ports, func(p int) bool { return slices.Contains(used[net], p) }) {
				k++
				net = home + "-" + strconv.Itoa(k)
			}
			if _, ok := toxiAliases[net]; !ok {
				order = append(order, net)
				w.nets[name] = append(w.nets[name], netAttach{name: net})
			}
			used[net] = append(used[net], ports...)
			names := depNames(sc, name, dep)
			if sc.Services[dep].Replicas > 1 {
				names = nil // relays hold them, one per replica's edge
			}
			toxiAliases[net] = append(toxiAliases[net], names...)
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

// depNames are the names under which caller reaches dep, each of which
// must resolve to the edge's proxy: dep's name and, for Compose services,
// its container_name and its aliases on the networks the two share.
func depNames(sc *scenario.Scenario, caller, dep string) []string {
	names := []string{dep}
	_, from, ok1 := projectOf(sc.Services[caller], caller)
	_, to, ok2 := projectOf(sc.Services[dep], dep)
	if !ok1 || !ok2 {
		return names
	}
	if to.ContainerName != "" {
		names = append(names, to.ContainerName)
	}
	for net, cfg := range to.Networks {
		if _, shared := from.Networks[net]; !shared && !(len(from.Networks) == 0 && net == "default") {
			continue
		}
		if cfg != nil {
			names = append(names, cfg.Aliases...)
		}
	}
	slices.Sort(names[1:])
	return slices.Compact(names)
}

// byNameProxies creates the proxies of edge e of a service that reaches
// its dependencies by name: one per port the dependency listens on (the
// edge's proxy for the first, PortProxy's name for the others). For a
// dependency of one replica they listen at Toxiproxy's address on the
// caller's network for it, on the dependency's own ports, under its names.
// For a replicated one they listen on Toxiproxy's ports from base (then
// base+1000, …), and a relay container per replica holds the names on
// that network, so that the name resolves to every replica's edge. It
// returns the address the caller dials for the first port.
func (t *Testbed) byNameProxies(ctx context.Context, sc *scenario.Scenario, w *wiring, tx *toxi, caller string, e scenario.Edge, base int) (string, error) {
	dnet := w.depNet[caller][e.To]
	ip, ok := tx.ips[dnet]
	if !ok {
		return "", fmt.Errorf("testbed: docker: toxiproxy has no address on network %s", dnet)
	}
	dep := sc.Services[e.To]
	ports := append([]int{servicePort(dep)}, dep.ExtraPorts()...)
	relayed := dep.Replicas > 1
	var pairs []string
	for k, port := range ports {
		name := e.Proxy
		if k > 0 {
			name = scenario.PortProxy(e.Proxy, port)
		}
		p := strconv.Itoa(port)
		listen := net.JoinHostPort(ip, p)
		if relayed {
			lp := strconv.Itoa(base + 1000*k)
			listen = "0.0.0.0:" + lp
			pairs = append(pairs, "--pair", "0.0.0.0:"+p+"=toxiproxy:"+lp)
		}
		upstream := net.JoinHostPort(ctrName(t.RunID, alias(sc.InstanceName(e.To, e.Replica))), p)
		if err := createProxy(ctx, tx.url, name, listen, upstream); err != nil {
			return "", err
		}
	}
	if relayed {
		s := spec{name: "relay-" + strings.ReplaceAll(e.Proxy, "->", "-"), image: t.Image, cmd: append([]string{"serve", "relay"}, pairs...),
			nets: []netAttach{{name: dnet, aliases: depNames(sc, caller, e.To)}, {name: w.main}}}
		if _, err := t.run(ctx, s); err != nil {
			return "", err
		}
	}
	return net.JoinHostPort(e.To, strconv.Itoa(ports[0])), nil
}
