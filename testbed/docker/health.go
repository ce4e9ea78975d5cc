package docker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/chaosrun/chaosrun/scenario"
)

// dockerHealth is the container health check that runs a health command
// inside the container; nil for a path or tcp, which the harness checks
// through the published port.
func dockerHealth(h scenario.Health) *container.HealthConfig {
	if len(h.Command) == 0 {
		return nil
	}
	return &container.HealthConfig{
		Test:     append([]string{"CMD"}, h.Command...),
		Interval: 500 * time.Millisecond,
		Timeout:  3 * time.Second,
		Retries:  3,
	}
}

// waitHealthy waits until b is ready: its health command reports healthy
// (the engine runs it in the container), or its path or port answers.
func (t *Testbed) waitHealthy(ctx context.Context, b *box) error {
	if len(b.health.Command) == 0 {
		return waitReady(ctx, b.readyAddr(), b.health.Check, t.ReadyTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, t.ReadyTimeout)
	defer cancel()
	last := "no result yet"
	for {
		res, err := t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
		if err == nil && res.Container.State != nil && res.Container.State.Health != nil {
			h := res.Container.State.Health
			if h.Status == container.Healthy {
				return nil
			}
			if n := len(h.Log); n > 0 {
				last = fmt.Sprintf("exit %d: %s", h.Log[n-1].ExitCode, strings.TrimSpace(h.Log[n-1].Output))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last health check: %s)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
