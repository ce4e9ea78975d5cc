package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/chaosrun/chaosrun/scenario"
)

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

// HostEnv is an Env whose testbed can act on hosts. The schedule finds it by
// type assertion, so testbeds without host control need not implement it.
type HostEnv interface {
	Env
	// Hosts is the testbed's host control; nil when it has none.
	Hosts() HostAPI
	// InstancesFor names the instances a fault's host: covers ("svc": every
	// replica, "svc.N": one).
	InstancesFor(host string) ([]string, error)
}

var (
	hostMu    sync.RWMutex
	hostKinds = map[string]bool{}
)

// IsHostKind reports whether kind acts on a host (host:) rather than an
// edge (edge:).
func IsHostKind(kind string) bool {
	hostMu.RLock()
	defer hostMu.RUnlock()
	return hostKinds[kind]
}

// hostOp is one host action and its undo.
type hostOp struct {
	kind         string
	apply, undo  func(HostAPI, context.Context, string) error
	applied, how string
}

var hostOps = []hostOp{
	{"host_stop", HostAPI.Stop, HostAPI.Start, "stopped", "stop (SIGTERM, then SIGKILL) and start again"},
	{"host_pause", HostAPI.Pause, HostAPI.Unpause, "paused", "pause (freeze) and unpause"},
	{"host_kill", HostAPI.Kill, HostAPI.Start, "killed", "kill (SIGKILL) and start again"},
	{"host_disconnect", HostAPI.Disconnect, HostAPI.Reconnect, "disconnected", "disconnect from the network and reconnect with its aliases"},
}

func init() {
	for _, op := range hostOps {
		hostMu.Lock()
		hostKinds[op.kind] = true
		hostMu.Unlock()
		Register(op.kind, func(spec scenario.Fault) (Fault, error) {
			if spec.Host == "" {
				return nil, fmt.Errorf("%s needs host: (an instance: \"svc\" or \"svc.N\")", op.kind)
			}
			return &hostFault{op: op, host: spec.Host}, nil
		})
	}
}

// hostFault applies a host action to every instance host: names.
type hostFault struct {
	op   hostOp
	host string
}

func hostsOf(env Env, host string) (HostAPI, []string, error) {
	he, ok := env.(HostEnv)
	if !ok || he.Hosts() == nil {
		return nil, nil, errors.New("this testbed cannot act on hosts (host faults need --testbed docker)")
	}
	insts, err := he.InstancesFor(host)
	if err != nil {
		return nil, nil, fmt.Errorf("host %s: %w", host, err)
	}
	if len(insts) == 0 {
		return nil, nil, fmt.Errorf("host %s has no instances", host)
	}
	return he.Hosts(), insts, nil
}

// Apply acts on each instance; if one fails, it undoes those done.
func (f *hostFault) Apply(ctx context.Context, env Env) error {
	api, insts, err := hostsOf(env, f.host)
	if err != nil {
		return err
	}
	for i, in := range insts {
		if err := f.op.apply(api, ctx, in); err != nil {
			err = fmt.Errorf("%s %s: %w", f.op.kind, in, err)
			return errors.Join(err, rollback(ctx, insts[:i], func(ctx context.Context, in string) error {
				return f.op.undo(api, ctx, in)
			}))
		}
	}
	return nil
}

// Revert undoes the action on every instance, reporting every failure.
func (f *hostFault) Revert(ctx context.Context, env Env) error {
	api, insts, err := hostsOf(env, f.host)
	if err != nil {
		return err
	}
	var errs []error
	for _, in := range insts {
		if err := f.op.undo(api, ctx, in); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: undo: %w", f.op.kind, in, err))
		}
	}
	return errors.Join(errs...)
}

func (f *hostFault) Describe() string {
	return fmt.Sprintf("%s on %s: %s", f.op.kind, f.host, f.op.how)
}
