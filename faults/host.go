package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/record"
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
	{"host_kill", HostAPI.Kill, HostAPI.Start, "killed", "kill (SIGKILL) and start again (a service with a restart policy: its main process killed, as in a crash, and the engine's restart awaited)"},
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

// Recoverer is a HostAPI that knows how long the engine's restart policy
// took to bring an instance back after a kill: until it ran again and until
// it was healthy (ok false when the engine did not bring it back; the
// harness then started it).
type Recoverer interface {
	Recovery(instance string) (running, healthy time.Duration, ok bool)
}

// hostFault applies a host action to every instance host: names.
type hostFault struct {
	op   hostOp
	host string
	// counts are what the last revert observed: engine_restarts, and the
	// longest restart_ms and recovery_ms of the instances the engine
	// brought back after a kill.
	counts map[string]int64
}

// Counts are the engine's recoveries the last revert observed; nil when
// the engine recovered nothing.
func (f *hostFault) Counts() map[string]int64 { return f.counts }

// noteRecoveries reads back how the engine recovered each instance.
func (f *hostFault) noteRecoveries(api HostAPI, insts []string) {
	r, ok := api.(Recoverer)
	if !ok || f.op.kind != "host_kill" {
		return
	}
	f.counts = nil
	for _, in := range insts {
		running, healthy, ok := r.Recovery(in)
		if !ok {
			continue
		}
		if f.counts == nil {
			f.counts = map[string]int64{}
		}
		f.counts[record.RecoveryRestarts]++
		f.counts[record.RecoveryRunningMs] = max(f.counts[record.RecoveryRunningMs], running.Milliseconds())
		f.counts[record.RecoveryHealthyMs] = max(f.counts[record.RecoveryHealthyMs], healthy.Milliseconds())
	}
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
	f.noteRecoveries(api, insts)
	return errors.Join(errs...)
}

func (f *hostFault) Describe() string {
	return fmt.Sprintf("%s on %s: %s", f.op.kind, f.host, f.op.how)
}
