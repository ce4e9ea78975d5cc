package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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
	if len(b.health.Command) == 0 && b.port == 0 {
		return t.waitRunning(ctx, b) // no port, no health check: started is ready
	}
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

// waitReady polls addr until health answers: an HTTP 200 on the path, or
// for "tcp" a connection the server holds open (a published port accepts
// even while nothing listens behind it, then drops the connection).
func waitReady(ctx context.Context, addr, health string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hc := &http.Client{Timeout: time.Second}
	var last error
	for {
		if health == scenario.HealthTCP {
			last = tcpReady(ctx, addr)
		} else {
			last = httpReady(ctx, hc, "http://"+addr+health)
		}
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func httpReady(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16)) //nolint:errcheck
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return nil
}

func tcpReady(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(150 * time.Millisecond)) //nolint:errcheck
	var buf [1]byte
	_, err = c.Read(buf[:])
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return nil // held open: something listens behind the port
	}
	if err == nil {
		return nil // it spoke first
	}
	return fmt.Errorf("%s dropped the connection: %w", addr, err)
}

// waitRunning waits until b's container runs.
func (t *Testbed) waitRunning(ctx context.Context, b *box) error {
	ctx, cancel := context.WithTimeout(ctx, t.ReadyTimeout)
	defer cancel()
	for !t.running(ctx, b) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (the container does not run)", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// waitJob waits until a job's container has exited 0 (within the ready
// timeout); another exit code is an error.
func (t *Testbed) waitJob(ctx context.Context, b *box) error {
	ctx, cancel := context.WithTimeout(ctx, t.ReadyTimeout)
	defer cancel()
	for {
		res, err := t.cli.ContainerInspect(ctx, b.id, client.ContainerInspectOptions{})
		if err == nil && res.Container.State != nil && !res.Container.State.Running && !res.Container.State.Restarting && res.Container.State.Status == container.StateExited {
			if code := res.Container.State.ExitCode; code != 0 {
				return fmt.Errorf("the job exited %d (the services after it need exit 0: depends_on condition service_completed_successfully)", code)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the job did not finish within %s: %w", t.ReadyTimeout, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
