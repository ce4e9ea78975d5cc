package docker

import (
	"context"
	"maps"
	"sync"

	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
)

// startAll starts every service as soon as what it starts after is up,
// as Compose does: services that do not wait for each other start side
// by side. Each writes its proxies and instances into a part of its own;
// the parts are merged into topo in start order, so the topology does not
// depend on which finished first. The first failure stops the rest.
func (t *Testbed) startAll(ctx context.Context, sc *scenario.Scenario, w *wiring, tx *toxi, topo *testbed.Topology) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	order := sc.StartOrder()
	up := make(map[string]chan struct{}, len(order))
	parts := make(map[string]*testbed.Topology, len(order))
	for _, name := range order {
		up[name] = make(chan struct{})
		parts[name] = &testbed.Topology{Proxies: map[string]string{}}
	}
	var wg sync.WaitGroup
	for _, name := range order {
		wg.Go(func() {
			for _, dep := range sc.StartAfter(name) {
				select {
				case <-up[dep]:
				case <-ctx.Done():
					return
				}
			}
			if err := t.startService(ctx, sc, w, tx, parts[name], name); err != nil {
				cancel(err)
				return
			}
			close(up[name])
		})
	}
	wg.Wait()
	if ctx.Err() != nil { // the first failure, or why the run's ctx ended
		return context.Cause(ctx)
	}
	for _, name := range order {
		maps.Copy(topo.Proxies, parts[name].Proxies)
		topo.Instances = append(topo.Instances, parts[name].Instances...)
	}
	return nil
}
