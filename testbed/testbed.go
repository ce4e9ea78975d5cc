// Package testbed stands up a scenario's topology — its services, one
// Toxiproxy proxy per dependency edge — and tears it down on every path.
// It never evaluates SLOs.
package testbed

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/chaosrun/chaosrun/scenario"
)

// Testbed stands up a topology and tears it down.
type Testbed interface {
	// Name is the testbed's kind, as recorded in the run record.
	Name() string
	// Up starts every service of the scenario behind its Toxiproxy edges and
	// returns once all are ready. On error, whatever was started is stopped.
	Up(ctx context.Context, sc *scenario.Scenario) (*Topology, error)
	// Down stops everything Up started. It is safe to call more than once
	// and after a failed Up; it reports anything it could not stop.
	Down(ctx context.Context) error
}

// Instance is one running replica of a service.
type Instance struct {
	Service string `json:"service"`
	Index   int    `json:"index"`
	// Name is the service name, with ".N" when the service has replicas.
	Name string `json:"name"`
	// Address is host:port where the harness reaches the instance.
	Address string `json:"address"`
	PID     int    `json:"pid,omitempty"`
	// Metrics is the URL of its Prometheus metrics; "" is /metrics at
	// Address.
	Metrics string `json:"metrics,omitempty"`
}

// MetricsURL is where the instance's Prometheus metrics are read.
func (in Instance) MetricsURL() string {
	if in.Metrics != "" {
		return in.Metrics
	}
	return "http://" + in.Address + scenario.DefaultMetricsPath
}

// MetricsURL is the metrics URL of a service served at host:port, as its
// metrics: says.
func MetricsURL(svc *scenario.Service, host string, port int) string {
	if p := svc.MetricsPort(); p > 0 {
		port = p
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + svc.MetricsPath()
}

// Topology is what a testbed stood up.
type Topology struct {
	Instances []Instance
	// Proxies maps each Toxiproxy proxy name ("bank->vault") to the address
	// it listens on.
	Proxies map[string]string
	// ToxiproxyURL is the base URL of Toxiproxy's API.
	ToxiproxyURL string
	// ToxiproxyPID is Toxiproxy's process, when the testbed runs one.
	ToxiproxyPID int
	// Died receives an error when a service exits before Down.
	Died <-chan error
}

// TargetURL is the base URL of the first replica of service.
func (t *Topology) TargetURL(service string) (string, error) {
	for _, in := range t.Instances {
		if in.Service == service {
			return "http://" + in.Address, nil
		}
	}
	return "", fmt.Errorf("testbed: no running instance of service %q", service)
}

// Addresses maps each service to its instances' addresses (host:port), in
// replica order.
func (t *Topology) Addresses() map[string][]string {
	out := map[string][]string{}
	for _, in := range t.Instances {
		out[in.Service] = append(out[in.Service], in.Address)
	}
	return out
}

// HostControl is a testbed that can act on its instances for host faults.
// Callers find it by type assertion: a testbed without it has no host
// faults.
type HostControl interface {
	// Hosts is the testbed's host control.
	Hosts() HostAPI
}

// HostAPI is what a testbed does to one instance ("ledger" or "ledger.1")
// for host faults: containers on the Docker testbed, processes (signals) on
// the local one. Every undo (Start, Unpause, Reconnect) succeeds when there
// is nothing to undo.
type HostAPI interface {
	// Stop stops the instance gracefully (SIGTERM, then SIGKILL); Start
	// starts it again and returns once it is healthy.
	Stop(ctx context.Context, instance string) error
	Start(ctx context.Context, instance string) error
	// Pause freezes every process of the instance; Unpause thaws them.
	Pause(ctx context.Context, instance string) error
	Unpause(ctx context.Context, instance string) error
	// Kill kills the instance at once (SIGKILL); Start brings it back.
	Kill(ctx context.Context, instance string) error
	// Disconnect cuts the instance off the run's network; Reconnect
	// attaches it again under the same aliases.
	Disconnect(ctx context.Context, instance string) error
	Reconnect(ctx context.Context, instance string) error
}
