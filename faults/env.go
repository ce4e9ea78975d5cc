package faults

import "github.com/chaosrun/chaosrun/scenario"

// ScenarioEnv is the Env of a scenario's testbed: edges resolve through the
// scenario's topology, toxics go to its Toxiproxy, host faults to its hosts
// (nil when the testbed has none).
type ScenarioEnv struct {
	Scenario *scenario.Scenario
	API      ToxicAPI
	HostsAPI HostAPI
}

// ProxiesFor lists the Toxiproxy proxies of an edge.
func (e *ScenarioEnv) ProxiesFor(edge string) ([]string, error) { return e.Scenario.ProxiesFor(edge) }

// ScriptsAddToxics says the run's load may add toxics of its own: a k6
// script, through the extension's fault API; the native engine adds none.
func (e *ScenarioEnv) ScriptsAddToxics() bool {
	return e.Scenario == nil || e.Scenario.Workload.EngineName() != scenario.EngineNative
}

// Toxics is the Toxiproxy API.
func (e *ScenarioEnv) Toxics() ToxicAPI { return e.API }

// Hosts is the testbed's host API.
func (e *ScenarioEnv) Hosts() HostAPI { return e.HostsAPI }

// InstancesFor lists the instances a host fault targets.
func (e *ScenarioEnv) InstancesFor(host string) ([]string, error) {
	return e.Scenario.InstancesFor(host)
}
