package testbed

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// errLocalHost is what the local testbed answers for host faults it cannot
// do to a child process without moving its port.
var errLocalHost = errors.New("not available on the local testbed (a restarted process would get a new port): use --testbed docker")

// Hosts is the local testbed's host control: host_pause freezes an
// instance's process group (SIGSTOP) and thaws it (SIGCONT); the other host
// faults need the Docker testbed.
func (l *Local) Hosts() HostAPI { return localHosts{l} }

var _ HostControl = (*Local)(nil)

type localHosts struct{ l *Local }

func (h localHosts) group(instance string) (int, error) {
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	for _, p := range h.l.procs {
		if p.name == instance && instance != "toxiproxy" {
			return p.cmd.Process.Pid, nil
		}
	}
	return 0, fmt.Errorf("testbed: local: no instance %q in this run", instance)
}

func (h localHosts) signal(instance string, sig syscall.Signal) error {
	pgid, err := h.group(instance)
	if err != nil {
		return err
	}
	if err := syscall.Kill(-pgid, sig); err != nil {
		return fmt.Errorf("testbed: local: %s to %s (pgid %d): %w", sig, instance, pgid, err)
	}
	return nil
}

func (h localHosts) Pause(_ context.Context, instance string) error {
	return h.signal(instance, syscall.SIGSTOP)
}

func (h localHosts) Unpause(_ context.Context, instance string) error {
	return h.signal(instance, syscall.SIGCONT)
}

func (h localHosts) Stop(context.Context, string) error {
	return fmt.Errorf("host_stop: %w", errLocalHost)
}

// Start has nothing to undo: Stop and Kill never act locally.
func (h localHosts) Start(context.Context, string) error { return nil }

func (h localHosts) Kill(context.Context, string) error {
	return fmt.Errorf("host_kill: %w", errLocalHost)
}

func (h localHosts) Disconnect(context.Context, string) error {
	return fmt.Errorf("host_disconnect: %w", errLocalHost)
}

// Reconnect has nothing to undo: Disconnect never acts locally.
func (h localHosts) Reconnect(context.Context, string) error { return nil }
