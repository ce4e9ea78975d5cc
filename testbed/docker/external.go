package docker

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
)

// external puts the proxy workload->NAME, inside Toxiproxy's container, in
// front of an already-running service; its port is published on
// 127.0.0.1, where load reaches it. The service is checked directly, then
// through the proxy: a service on this machine's loopback only is not
// reachable from containers, and that is said.
func (t *Testbed) external(ctx context.Context, w *wiring, tx *toxi, topo *testbed.Topology, name string, svc *scenario.Service) (testbed.Instance, error) {
	if err := waitReady(ctx, svc.External, healthCheck(svc.Health), t.ReadyTimeout); err != nil {
		return testbed.Instance{}, fmt.Errorf("testbed: docker: external service %s at %s not healthy (%s): %w", name, svc.External, svc.Health, err)
	}
	proxy := scenario.LoadName + "->" + name
	port := w.front[name]
	upstream := containerSide(svc.External)
	if err := createProxy(ctx, tx.url, proxy, "0.0.0.0:"+strconv.Itoa(port), upstream); err != nil {
		return testbed.Instance{}, err
	}
	addr := tx.extraAddr(port)
	if err := waitReady(ctx, addr, healthCheck(svc.Health), t.ReadyTimeout); err != nil {
		return testbed.Instance{}, fmt.Errorf("testbed: docker: external service %s: not reachable from the containers at %s (%w); a service on this machine must listen on an address the Docker host gateway reaches, not 127.0.0.1 only", name, upstream, err)
	}
	topo.Proxies[proxy] = addr
	host, ps, _ := net.SplitHostPort(svc.External)
	p, _ := strconv.Atoi(ps)
	return testbed.Instance{Service: name, Name: name, Address: addr, Metrics: testbed.MetricsURL(svc, host, p)}, nil
}

// healthCheck is the path or tcp of an external service's health.
func healthCheck(h scenario.Health) string {
	if h.Check == "" {
		return scenario.HealthTCP
	}
	return h.Check
}
