package docker

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/moby/moby/client"
)

// crashState is what a host_kill of a container with a restart policy
// noted: the engine, not the harness, brings such a container back, and a
// goroutine of the testbed follows it back from the kill.
type crashState struct {
	killedAt      time.Time
	restartsAfter int // the engine's restart count to exceed
	recovery      recovery
	done          chan struct{} // closed once back, or given up (err)
	err           error
}

// recovery is how a crashed container came back: after the kill, when it
// ran again (the engine's restart) and when it was healthy.
type recovery struct{ running, healthy time.Duration }

// crash kills the container's main process with SIGKILL from this host, as
// a crash would: the engine's kill API marks the container stopped on
// purpose, and its restart policy then does not act. It needs the right to
// signal the engine's processes (root, or a rootful engine run by the same
// user). It then follows the container back in the background.
func (t *Testbed) crash(ctx context.Context, b *box) error {
	res, err := t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("docker inspect %s: %w", b.name, err)
	}
	st := res.Container.State
	if st == nil || !st.Running || st.Pid <= 0 {
		return fmt.Errorf("%s does not run", b.name)
	}
	if err := syscall.Kill(st.Pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("signal %s's main process (pid %d; a restart policy acts on a crash, which needs the right to signal the engine's processes): %w", b.name, st.Pid, err)
	}
	cs := &crashState{killedAt: time.Now(), restartsAfter: res.Container.RestartCount, done: make(chan struct{})}
	b.mu.Lock()
	b.crash = cs
	b.mu.Unlock()
	t.mu.Lock()
	wctx := t.watchCtx
	t.mu.Unlock()
	if wctx == nil {
		wctx = context.WithoutCancel(ctx)
	}
	t.watchers.Go(func() {
		cs.err = t.followRestart(wctx, b, cs)
		close(cs.done)
	})
	return nil
}

// followRestart waits until the engine has restarted a crashed container
// and it is healthy again, noting how long each took after the kill.
func (t *Testbed) followRestart(ctx context.Context, b *box, cs *crashState) error {
	ctx, cancel := context.WithTimeout(ctx, 2*t.ReadyTimeout) // the engine's restart, then health
	defer cancel()
	for {
		res, err := t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
		if err == nil && res.Container.State != nil && res.Container.State.Running && res.Container.RestartCount > cs.restartsAfter {
			cs.recovery.running = time.Since(cs.killedAt) // polled every 50 ms
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the engine did not restart %s within %s of its kill (its restart policy): %w", b.name, 2*t.ReadyTimeout, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := t.refreshPort(ctx, b); err != nil {
		return err
	}
	if err := t.waitHealthy(ctx, b); err != nil {
		return fmt.Errorf("%s not healthy after the engine restarted it: %w", b.name, err)
	}
	cs.recovery.healthy = time.Since(cs.killedAt)
	return nil
}

// awaitRestart waits for the engine's recovery of a crashed container
// that crash follows, and keeps its times.
func (t *Testbed) awaitRestart(ctx context.Context, b *box) error {
	b.mu.Lock()
	cs := b.crash
	b.mu.Unlock()
	select {
	case <-cs.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	b.crash = nil
	if cs.err == nil {
		b.recoveries = append(b.recoveries, cs.recovery)
	}
	b.mu.Unlock()
	return cs.err
}

// Recovery is how long the instance's last recovery by the engine's restart
// policy took after a host_kill: until it ran again and until it was
// healthy; ok is false when the engine recovered none.
func (h hostAPI) Recovery(instance string) (running, healthy time.Duration, ok bool) {
	b, err := h.box(instance)
	if err != nil {
		return 0, 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.recoveries) == 0 {
		return 0, 0, false
	}
	r := b.recoveries[len(b.recoveries)-1]
	return r.running, r.healthy, true
}
