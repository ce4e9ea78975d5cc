package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
)

// Down saves every container's log, removes the containers and the network,
// then checks by label that nothing of the run is left, all within ctx's
// deadline (the logs get a third of it at most). It is safe to call more
// than once and after a failed Up.
func (t *Testbed) Down(ctx context.Context) error {
	t.mu.Lock()
	t.down = true
	boxes := t.ctrs
	t.ctrs = nil
	t.byName = map[string]*box{}
	cli, nets, stop := t.cli, t.nets, t.stopWatch
	t.netID, t.nets = "", nil
	t.mu.Unlock()
	if stop != nil {
		stop()
	}
	t.watchers.Wait()
	if cli == nil {
		return nil
	}
	var errs []error
	// Logs get part of the time at most: removing comes first.
	lctx, cancel := logsContext(ctx)
	if err := t.saveLogs(lctx, boxes); err != nil {
		errs = append(errs, fmt.Errorf("testbed: docker: %w", err))
	}
	cancel()
	for i := len(boxes) - 1; i >= 0; i-- {
		if err := t.remove(ctx, boxes[i]); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range nets {
		if _, err := cli.NetworkRemove(ctx, id, client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("testbed: docker: remove network %s: %w", short(id), err))
		}
	}
	if err := t.removeProjectParts(ctx, cli); err != nil {
		errs = append(errs, err)
	}
	// Anything the run labelled and the lists above missed (a container
	// whose create answered late) goes too; then nothing may be left.
	if t.RunID != "" {
		if _, err := removeByLabel(ctx, cli, LabelRun+"="+t.RunID, nil); err != nil {
			errs = append(errs, err)
		}
		if left, err := leftovers(ctx, cli, LabelRun+"="+t.RunID); err != nil {
			errs = append(errs, err)
		} else if len(left) > 0 {
			errs = append(errs, fmt.Errorf("testbed: docker: still there after teardown: %s", strings.Join(left, ", ")))
		}
	}
	cli.Close()
	return errors.Join(errs...)
}

// logsContext bounds saving the logs at teardown: a third of the time ctx
// leaves, at most 10 s.
func logsContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := 10 * time.Second
	if end, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(end)/3)
	}
	return context.WithTimeout(ctx, d)
}

// remove force-removes b's container (unpausing it first: a paused
// container cannot be killed on every engine).
func (t *Testbed) remove(ctx context.Context, b *box) error {
	if b.id == "" {
		return nil
	}
	t.cli.ContainerUnpause(ctx, b.id, client.ContainerUnpauseOptions{}) //nolint:errcheck // most are not paused
	_, err := t.cli.ContainerRemove(ctx, b.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("testbed: docker: remove container %s (%s): %w", b.name, short(b.id), err)
	}
	return nil
}

// forget drops b from the run's lists.
func (t *Testbed) forget(b *box) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ctrs = slices.DeleteFunc(t.ctrs, func(x *box) bool { return x == b })
	if t.byName[b.name] == b {
		delete(t.byName, b.name)
	}
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// copyLogs writes b's stdout and stderr (the last tail lines, or "all").
func (t *Testbed) copyLogs(ctx context.Context, b *box, w io.Writer, tail string) error {
	rc, err := t.cli.ContainerLogs(ctx, b.id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: tail})
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = stdcopy.StdCopy(w, w, rc)
	return err
}

// createProxy asks Toxiproxy (at apiURL) for a proxy listening on listen
// inside its container and forwarding to upstream on the run's network.
func createProxy(ctx context.Context, apiURL, name, listen, upstream string) error {
	body, _ := json.Marshal(map[string]any{"name": name, "listen": listen, "upstream": upstream, "enabled": true})
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/proxies", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("testbed: docker: create proxy %s: %w", name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("testbed: docker: create proxy %s → %s: %s: %s", name, upstream, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}
