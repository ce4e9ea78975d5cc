// Package testbed stands up a scenario's topology — its services, one
// Toxiproxy proxy per dependency edge — and tears it down on every path.
// It never evaluates SLOs.
package testbed

import (
	"context"
	"fmt"

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
