package docker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/chaosrun/chaosrun/testbed"
)

// StopGrace is how long a stopped container gets between SIGTERM and
// SIGKILL.
const StopGrace = 2 * time.Second

// Hosts is the run's host control for host faults.
func (t *Testbed) Hosts() testbed.HostAPI { return hostAPI{t} }

// InstancesFor names the instances a host fault's host: covers.
func (t *Testbed) InstancesFor(host string) ([]string, error) {
	t.mu.Lock()
	sc := t.sc
	t.mu.Unlock()
	if sc == nil {
		return nil, errors.New("testbed: docker: not up")
	}
	return sc.InstancesFor(host)
}

var _ testbed.HostControl = (*Testbed)(nil)

type hostAPI struct{ t *Testbed }

func (h hostAPI) box(instance string) (*box, error) {
	h.t.mu.Lock()
	defer h.t.mu.Unlock()
	b := h.t.byName[instance]
	if b == nil || instance == "toxiproxy" {
		return nil, fmt.Errorf("testbed: docker: no instance %q in this run", instance)
	}
	return b, nil
}

func (b *box) setExpectDown(v bool) {
	b.mu.Lock()
	b.expectDown = v
	b.mu.Unlock()
}

// Stop stops the container: SIGTERM, then SIGKILL after StopGrace.
func (h hostAPI) Stop(ctx context.Context, instance string) error {
	b, err := h.box(instance)
	if err != nil {
		return err
	}
	b.setExpectDown(true)
	secs := int(StopGrace / time.Second)
	if _, err := h.t.cli.ContainerStop(ctx, b.id, client.ContainerStopOptions{Timeout: &secs}); err != nil {
		return fmt.Errorf("docker stop %s: %w", instance, err)
	}
	return nil
}

// Kill kills the container with SIGKILL.
func (h hostAPI) Kill(ctx context.Context, instance string) error {
	b, err := h.box(instance)
	if err != nil {
		return err
	}
	b.setExpectDown(true)
	if b.restarts {
		// A crash, as its restart policy sees one: the engine brings it
		// back, and Start waits for that.
		return h.t.crash(ctx, b)
	}
	if _, err := h.t.cli.ContainerKill(ctx, b.id, client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil {
		return fmt.Errorf("docker kill %s: %w", instance, err)
	}
	return nil
}

// Start starts a stopped or killed container (nothing when it runs), reads
// its published port again and waits until it is healthy.
func (h hostAPI) Start(ctx context.Context, instance string) error {
	b, err := h.box(instance)
	if err != nil {
		return err
	}
	b.mu.Lock()
	crashed := b.crash != nil
	b.mu.Unlock()
	if crashed {
		if err := h.t.awaitRestart(ctx, b); err != nil {
			return err
		}
		b.setExpectDown(false)
		return nil
	}
	res, err := h.t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("docker inspect %s: %w", instance, err)
	}
	if st := res.Container.State; st == nil || !st.Running {
		if _, err := h.t.cli.ContainerStart(ctx, b.id, client.ContainerStartOptions{}); err != nil {
			return fmt.Errorf("docker start %s: %w", instance, err)
		}
		if err := h.t.refreshPort(ctx, b); err != nil {
			return err
		}
	}
	if err := h.t.waitHealthy(ctx, b); err != nil {
		return fmt.Errorf("%s not healthy after start: %w", instance, err)
	}
	b.setExpectDown(false)
	return nil
}

// refreshPort reads b's published port again (it is fixed for the run, but
// an engine may move it on restart).
func (t *Testbed) refreshPort(ctx context.Context, b *box) error {
	res, err := t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("docker inspect %s: %w", b.name, err)
	}
	ns := res.Container.NetworkSettings
	if ns == nil {
		return nil
	}
	for _, pb := range ns.Ports[network.MustParsePort(strconv.Itoa(b.port)+"/tcp")] {
		if p, err := strconv.Atoi(pb.HostPort); err == nil && p > 0 {
			b.mu.Lock()
			b.hostPort = p
			b.mu.Unlock()
			return nil
		}
	}
	return nil
}

// Pause freezes the container's processes (docker pause).
func (h hostAPI) Pause(ctx context.Context, instance string) error {
	b, err := h.box(instance)
	if err != nil {
		return err
	}
	if _, err := h.t.cli.ContainerPause(ctx, b.id, client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("docker pause %s: %w", instance, err)
	}
	return nil
}

// Unpause thaws the container; nothing when it is not paused.
func (h hostAPI) Unpause(ctx context.Context, instance string) error {
	b, err := h.box(instance)
	if err != nil {
		return err
	}
	res, err := h.t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("docker inspect %s: %w", instance, err)
	}
	if st := res.Container.State; st == nil || !st.Paused {
		return nil
	}
	if _, err := h.t.cli.ContainerUnpause(ctx, b.id, client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("docker unpause %s: %w", instance, err)
	}
	return nil
}

// Disconnect cuts the container off its networks.
func (h hostAPI) Disconnect(ctx context.Context, instance string) error {
	b, err := h.box(instance)
	if err != nil {
		return err
	}
	for _, n := range b.nets {
		if _, err := h.t.cli.NetworkDisconnect(ctx, n.name, client.NetworkDisconnectOptions{Container: b.id, Force: true}); err != nil {
			return fmt.Errorf("docker network disconnect %s %s: %w", n.name, instance, err)
		}
	}
	return nil
}

// Reconnect attaches the container to its networks again under its
// aliases; nothing for those it is attached to.
func (h hostAPI) Reconnect(ctx context.Context, instance string) error {
	b, err := h.box(instance)
	if err != nil {
		return err
	}
	res, err := h.t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("docker inspect %s: %w", instance, err)
	}
	for _, n := range b.nets {
		if ns := res.Container.NetworkSettings; ns != nil && ns.Networks[n.name] != nil {
			continue
		}
		_, err = h.t.cli.NetworkConnect(ctx, n.name, client.NetworkConnectOptions{Container: b.id, EndpointConfig: &network.EndpointSettings{Aliases: n.aliases}})
		if err != nil && !cerrdefs.IsConflict(err) {
			return fmt.Errorf("docker network connect %s %s: %w", n.name, instance, err)
		}
	}
	return h.t.refreshPort(ctx, b)
}
