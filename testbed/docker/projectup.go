package docker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/chaosrun/chaosrun/scenario"
)

// prepareProject readies what the scenario's Compose services need
// before any starts: their images built (build:), the port of each that
// declares none read from its image's EXPOSE, and the run's own volume
// for each named volume they mount.
func (t *Testbed) prepareProject(ctx context.Context, sc *scenario.Scenario) error {
	var proj *types.Project
	for _, name := range sc.StartOrder() {
		svc := sc.Services[name]
		p, cfg, ok := projectOf(svc, name)
		if !ok {
			continue
		}
		proj = p
		if cfg.Build != nil {
			ref, err := t.buildService(ctx, name, cfg.Build)
			if err != nil {
				return err
			}
			t.mu.Lock()
			t.built[name] = ref
			t.mu.Unlock()
		}
		if svc.Port == 0 {
			port, err := t.exposedPort(ctx, t.imageFor(name, svc))
			if err != nil {
				return fmt.Errorf("testbed: docker: %s: %w", name, err)
			}
			svc.Port = port
		}
	}
	if proj == nil {
		return nil
	}
	return t.createVolumes(ctx, sc, proj)
}

// imageFor is the image a service runs: the one the run built for it,
// else its own.
func (t *Testbed) imageFor(name string, svc *scenario.Service) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ref, ok := t.built[name]; ok {
		return ref
	}
	return svc.Image
}

// exposedPort is the lowest TCP port image declares with EXPOSE; 0 when
// it declares none.
func (t *Testbed) exposedPort(ctx context.Context, image string) (int, error) {
	res, err := t.cli.ImageInspect(ctx, image)
	if err != nil {
		return 0, fmt.Errorf("inspect image %s: %w", image, err)
	}
	if res.Config == nil {
		return 0, nil
	}
	var ports []int
	for p := range res.Config.ExposedPorts {
		num, proto, _ := strings.Cut(p, "/")
		if n, err := strconv.Atoi(num); err == nil && (proto == "" || proto == "tcp") {
			ports = append(ports, n)
		}
	}
	sort.Ints(ports)
	if len(ports) == 0 {
		return 0, nil
	}
	return ports[0], nil
}

// createVolumes gives each named volume the run's services mount a volume
// of the run's own (labelled, removed at teardown), so a run never writes
// into the volumes the project's team uses; an external volume is used as
// it is and must exist.
func (t *Testbed) createVolumes(ctx context.Context, sc *scenario.Scenario, proj *types.Project) error {
	used := map[string]bool{}
	for _, name := range sc.StartOrder() {
		if _, cfg, ok := projectOf(sc.Services[name], name); ok {
			for _, v := range cfg.Volumes {
				if v.Type == types.VolumeTypeVolume && v.Source != "" {
					used[v.Source] = true
				}
			}
		}
	}
	keys := make([]string, 0, len(used))
	for k := range used {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		vol, ok := proj.Volumes[key]
		if !ok {
			return fmt.Errorf("testbed: docker: volume %s is not declared under the project's volumes:", key)
		}
		if vol.External {
			if _, err := t.cli.VolumeInspect(ctx, vol.Name, client.VolumeInspectOptions{}); err != nil {
				return fmt.Errorf("testbed: docker: external volume %s (%s) is not on this engine: create it first (docker volume create %s): %w", key, vol.Name, vol.Name, err)
			}
			t.volumes[key] = vol.Name
			continue
		}
		name := "chaosrun-" + t.RunID + "-" + key
		labels := t.labels("")
		for k, v := range vol.Labels {
			labels[k] = v
		}
		if _, err := t.cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name, Driver: vol.Driver, DriverOpts: vol.DriverOpts, Labels: labels}); err != nil {
			return fmt.Errorf("testbed: docker: create volume %s for %s: %w", name, key, err)
		}
		t.mu.Lock()
		t.volumes[key] = name
		t.createdVolumes = append(t.createdVolumes, name)
		t.mu.Unlock()
	}
	return nil
}

// removeProjectParts removes the volumes the run created and the images it
// built, once their containers are gone. Volumes that existed before the
// run are not touched.
func (t *Testbed) removeProjectParts(ctx context.Context, cli *client.Client) error {
	t.mu.Lock()
	vols, refs := t.createdVolumes, t.builtRefs
	t.createdVolumes, t.builtRefs = nil, nil
	t.mu.Unlock()
	var errs []error
	for _, v := range vols {
		if _, err := cli.VolumeRemove(ctx, v, client.VolumeRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("testbed: docker: remove volume %s: %w", v, err))
		}
	}
	for _, ref := range refs {
		if _, err := cli.ImageRemove(ctx, ref, client.ImageRemoveOptions{PruneChildren: true}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("testbed: docker: remove image %s: %w", ref, err))
		}
	}
	return errors.Join(errs...)
}
