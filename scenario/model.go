// Package scenario is the scenario model (format v1): the services and their
// dependency edges, the workload, the fault schedule and the assertions. It
// loads and validates YAML with file:line:col errors and knows nothing of
// Docker, k6 or HTTP.
package scenario

import "time"

// Scenario is one resilience claim, ready to run.
type Scenario struct {
	// Version is the format version; 1 is the only one.
	Version     int    `yaml:"version" json:"version" jsonschema:"enum=1"`
	Name        string `yaml:"name" json:"name" jsonschema:"pattern=^[a-z0-9][a-z0-9-]*$"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Seed makes every random choice of the run reproducible; 0 picks one.
	Seed int64 `yaml:"seed,omitempty" json:"seed,omitempty"`
	// Timeout bounds the whole run's wall time; 0 derives it from the workload.
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// AllowTargets lists addresses (host or host:port) outside the testbed
	// that load may reach; everything else but loopback is refused.
	AllowTargets []string `yaml:"allow_targets,omitempty" json:"allow_targets,omitempty"`
	// Compose is a Compose file, or several merged in order (relative to
	// the scenario), whose services join the scenario's under their
	// Compose names, each dependency edge through a Toxiproxy proxy that
	// the dependency's name resolves to; services: entries of the same name
	// refine them (env, health, metrics, port). They run on the Docker
	// testbed.
	Compose Files `yaml:"compose,omitempty" json:"compose,omitempty"`
	// Services by name, in file order (Order).
	Services   map[string]*Service `yaml:"services" json:"services"`
	Workload   Workload            `yaml:"workload" json:"workload"`
	Faults     []Fault             `yaml:"faults,omitempty" json:"faults,omitempty"`
	Assertions []Assertion         `yaml:"assertions,omitempty" json:"assertions,omitempty"`
	// EndChecks are the services' own checks, called after load and before
	// teardown (e.g. money conservation); assertions read them as
	// end_check_failures{check:NAME}.
	EndChecks []EndCheck `yaml:"end_checks,omitempty" json:"end_checks,omitempty"`

	// Order lists service names as they appear in the file.
	Order []string `yaml:"-" json:"-"`
	// File is where the scenario was loaded from.
	File string `yaml:"-" json:"-"`

	// meta remembers where each value came from (file position or --set
	// flag) and which defaults were filled, for errors after overrides.
	meta *meta
}

// Service is one service of the topology.
type Service struct {
	// Run names a built-in target served by `chaosrun serve` (bankservice,
	// ledger, vault, kvdispatcher, kvstore).
	Run string `yaml:"run,omitempty" json:"run,omitempty"`
	// Image is a local Docker image of the user's own service (docker
	// testbed; never pulled). Port and Health say where it serves.
	Image string `yaml:"image,omitempty" json:"image,omitempty"`
	// Port is the port the service listens on inside its container (with
	// image:); with command: the local testbed picks one and substitutes it
	// for {port} in the command.
	Port int `yaml:"port,omitempty" json:"port,omitempty" jsonschema:"minimum=1,maximum=65535"`
	// Command is the user's own service as a program to run on the local
	// testbed, e.g. [redis-server, --port, "{port}"].
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	// Replicas is how many instances run; default 1.
	Replicas int `yaml:"replicas,omitempty" json:"replicas,omitempty" jsonschema:"minimum=1,maximum=16"`
	// Config is passed to the target as --key=value flags.
	Config map[string]string `yaml:"config,omitempty" json:"config,omitempty"`
	// DependsOn names the services this one calls; each becomes a Toxiproxy
	// edge "from->to" (one proxy per replica of the callee).
	DependsOn []string `yaml:"depends_on,omitempty" json:"depends_on,omitempty"`
	// Health is how the testbed knows an instance is ready: an HTTP path
	// (default /healthz), "tcp" (the port accepts and holds a connection),
	// or a command as a list, ready when it exits 0 (templated like env).
	Health Health `yaml:"health,omitempty" json:"health,omitempty"`
	// Env is the environment of the service's process or container. Values
	// may use {port} (its port), {instance} (its instance name) and
	// {dep.NAME} (the address, comma-separated for replicas, through which
	// it reaches dependency NAME's Toxiproxy edge); {{ is a literal {.
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Metrics says where the service serves Prometheus metrics for scrape:
	// assertions; default path /metrics on the service's port.
	Metrics *Metrics `yaml:"metrics,omitempty" json:"metrics,omitempty"`
	// External is a service that already runs (host:port), started by
	// something else: load and faults reach it through a Toxiproxy proxy
	// the run starts in front of it (edge workload->NAME). Its host must be
	// loopback or listed in allow_targets (or --allow-target).
	External string `yaml:"external,omitempty" json:"external,omitempty"`

	// Imported holds what a service described in another file (a Compose
	// file) brings beyond the fields above; nil for scenario services.
	Imported *Imported `yaml:"-" json:"-"`
}

// Workload is the load of the run: request streams declared here, run by
// chaosrun's native engine, or a k6 script.
type Workload struct {
	// Engine runs the load: native (the default) or k6 (the default when
	// script is set).
	Engine string `yaml:"engine,omitempty" json:"engine,omitempty" jsonschema:"enum=native,enum=k6"`
	// Executors are the k6 executors the script's options name, found by
	// a light scan when the scenario is loaded; none when it names none.
	Executors []string `yaml:"-" json:"-"`
	// Script is a k6 script in workloads/ (or a path relative to the
	// scenario), for engine k6.
	Script string `yaml:"script,omitempty" json:"script,omitempty"`
	// Duration is how long load runs.
	Duration Duration `yaml:"duration" json:"duration"`
	// Targets lists the services load is sent to; each is given to a k6
	// script as the environment variable TARGET_<NAME> (a base URL). A
	// native workload's default is its streams' targets.
	Targets []string `yaml:"targets,omitempty" json:"targets,omitempty"`
	// Params are passed to a k6 script as environment variables (__ENV).
	Params map[string]string `yaml:"params,omitempty" json:"params,omitempty"`
	// Streams are a native workload's request streams, by name (the
	// scenario tag of their series).
	Streams map[string]*Stream `yaml:"streams,omitempty" json:"streams,omitempty"`
	// Connections bounds the native engine's connections to one service
	// instance; requests beyond it wait in the client, and the wait counts
	// in their latency. Default: 50 ms of the streams' peak rates, at
	// least 256.
	Connections int `yaml:"connections,omitempty" json:"connections,omitempty" jsonschema:"minimum=1,maximum=100000"`

	// StreamOrder lists stream names as they appear in the file.
	StreamOrder []string `yaml:"-" json:"-"`
	// K6 adds k6 outputs and `k6 run` flags of the workload's own.
	K6 *K6 `yaml:"k6,omitempty" json:"k6,omitempty"`
}

// Fault is one entry of the fault schedule.
type Fault struct {
	Name string `yaml:"name" json:"name"`
	// Kind is a registered fault kind (latency, bandwidth, slow_close,
	// timeout, reset_peer, limit_data, proxy_down).
	Kind string `yaml:"kind" json:"kind"`
	// Stage is the stage the kind declares it needs on its edge, set by
	// validation (Options.FaultStage); not part of the file.
	Stage EdgeStage `yaml:"-" json:"-"`
	// Edge is "from->to" (every replica of to) or "from->to.N" (one replica).
	Edge string `yaml:"edge,omitempty" json:"edge,omitempty"`
	// Host names the instance(s) a host fault (host_stop, host_pause,
	// host_kill, host_disconnect) acts on: "svc" (every replica) or "svc.N".
	// A fault has an edge or a host, never both.
	Host string `yaml:"host,omitempty" json:"host,omitempty"`
	// Start is the offset from load start; Duration how long the fault lasts.
	Start    Duration `yaml:"start" json:"start"`
	Duration Duration `yaml:"duration" json:"duration"`
	// Direction is downstream (default) or upstream, as in Toxiproxy.
	Direction string `yaml:"direction,omitempty" json:"direction,omitempty" jsonschema:"enum=downstream,enum=upstream"`
	// Toxicity is the fraction of connections affected; default 1.
	Toxicity *float64 `yaml:"toxicity,omitempty" json:"toxicity,omitempty" jsonschema:"minimum=0,maximum=1"`
	// Attributes are the kind's parameters (e.g. latency: 2000, jitter: 100).
	Attributes map[string]float64 `yaml:"attributes,omitempty" json:"attributes,omitempty"`
	// Match selects the requests of an HTTP fault kind; nil is all of them.
	Match *Match `yaml:"match,omitempty" json:"match,omitempty"`
	// ExpectEffect makes a fault that moved no observed series beyond
	// run-to-run noise a failing check, not a warning: the fault must
	// bite (a wrong edge or a cached path would prove nothing).
	ExpectEffect bool `yaml:"expect_effect,omitempty" json:"expect_effect,omitempty"`
}

// Assertion checks one metric over one window.
type Assertion struct {
	Name string `yaml:"name" json:"name"`
	// Metric is a k6 metric with optional tag filters:
	// http_req_duration{api:TransactCheck,status:200}.
	Metric string `yaml:"metric" json:"metric"`
	// Window is "whole", "before FAULT", "during FAULT" or "after FAULT";
	// default whole.
	Window string `yaml:"window,omitempty" json:"window,omitempty"`
	// Settle skips the first part of the window (e.g. while a fault bites).
	Settle Duration `yaml:"settle,omitempty" json:"settle,omitempty"`
	// Baseline is the window that "baseline" in a check refers to; default
	// "before" the first fault.
	Baseline string `yaml:"baseline,omitempty" json:"baseline,omitempty"`
	// Checks are k6 threshold expressions, with units and a baseline:
	// "p(99) < 250ms", "rate < 0.01", "count == 0", "p(99) < 1.5 *
	// baseline"; or k6's object form, {threshold: "p(99) < 1s",
	// abortOnFail: true, delayAbortEval: 10s}, to stop the run once the
	// check fails.
	Checks []Check `yaml:"checks" json:"checks"`
}

// Check is one check of an assertion: a threshold expression, written as
// a string or in k6's object form.
type Check struct {
	// Threshold is the expression, e.g. "p(99) < 250ms".
	Threshold string `yaml:"threshold" json:"threshold"`
	// AbortOnFail stops the run as soon as the check fails while load runs:
	// faults reverted, load stopped, the record marked aborted.
	AbortOnFail bool `yaml:"abortOnFail,omitempty" json:"abortOnFail,omitempty"`
	// DelayAbortEval is how far into the load the check may first stop the
	// run (with abortOnFail); default at once.
	DelayAbortEval Duration `yaml:"delayAbortEval,omitempty" json:"delayAbortEval,omitempty"`
}

// EndCheck is a service's own check, called once after load: a GET of Path
// on the first replica of Service that must answer 200 with JSON
// {"ok": true, "detail": "...", "values": {...}}.
type EndCheck struct {
	Name    string `yaml:"name" json:"name"`
	Service string `yaml:"service" json:"service"`
	Path    string `yaml:"path" json:"path" jsonschema:"pattern=^/"`
}

// Duration is a time.Duration written as "20s" or "1m30s" in YAML.
type Duration time.Duration

// Std returns the duration as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }
