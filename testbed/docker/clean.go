package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/chaosrun/chaosrun/internal/exitcode"
)

// Removed is what Clean removed (or, with DryRun, would remove).
type Removed struct {
	Containers []string // "name (run RUNID, scenario S)"
	Networks   []string
	// Volumes and Images are the named volumes a run created and the
	// images it built for Compose services.
	Volumes, Images []string
	// Skipped lists runs left alone because their harness still runs.
	Skipped []string
}

// CleanOptions selects what Clean removes.
type CleanOptions struct {
	// Run limits Clean to one run ID; empty means every run.
	Run string
	// All removes the objects of runs whose harness still runs, too.
	All bool
	// DryRun lists without removing.
	DryRun bool
}

// Command is chaosrun clean: it removes (or lists) what runs left
// behind, as the options say, and writes what went on stdout. An engine
// that does not answer, or a failed removal, exits 3.
func (o CleanOptions) Command(ctx context.Context, stdout io.Writer) error {
	cli, err := NewClient(ctx)
	if err != nil {
		return exitcode.Fail(exitcode.RunError, err)
	}
	defer cli.Close()
	rm, err := Clean(ctx, cli, o)
	rm.Report(stdout, o.DryRun)
	if err != nil {
		return exitcode.Fail(exitcode.RunError, err)
	}
	return nil
}

// Clean removes the containers and networks that runs left behind (a
// harness killed by SIGKILL cannot tear down). Runs whose harness process
// still runs on this host are left alone unless All is set.
func Clean(ctx context.Context, cli *client.Client, o CleanOptions) (Removed, error) {
	label := LabelRun
	if o.Run != "" {
		label += "=" + o.Run
	}
	var rm Removed
	skip := func(labels map[string]string) bool {
		if o.All || !ownerAlive(labels[LabelOwner]) {
			return false
		}
		run := labels[LabelRun]
		if !slices.Contains(rm.Skipped, run) {
			rm.Skipped = append(rm.Skipped, run)
		}
		return true
	}
	if o.DryRun {
		cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
		if err != nil {
			return rm, fmt.Errorf("docker: list containers: %w", err)
		}
		for _, c := range cs.Items {
			if !skip(c.Labels) {
				rm.Containers = append(rm.Containers, describe(containerName(c.Names, c.ID), c.Labels))
			}
		}
		ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", label)})
		if err != nil {
			return rm, fmt.Errorf("docker: list networks: %w", err)
		}
		for _, n := range ns.Items {
			if !skip(n.Labels) {
				rm.Networks = append(rm.Networks, describe(n.Name, n.Labels))
			}
		}
		return rm, nil
	}
	got, err := removeByLabel(ctx, cli, label, skip)
	got.Skipped = rm.Skipped
	sort.Strings(got.Skipped)
	return got, err
}

// removeByLabel removes every container, then every network, carrying
// label ("key" or "key=value"), except those skip keeps.
func removeByLabel(ctx context.Context, cli *client.Client, label string, skip func(map[string]string) bool) (Removed, error) {
	var rm Removed
	var errs []error
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return rm, fmt.Errorf("docker: list containers labelled %s: %w", label, err)
	}
	for _, c := range cs.Items {
		if skip != nil && skip(c.Labels) {
			continue
		}
		cli.ContainerUnpause(ctx, c.ID, client.ContainerUnpauseOptions{}) //nolint:errcheck // most are not paused
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("docker: remove container %s: %w", containerName(c.Names, c.ID), err))
			continue
		}
		rm.Containers = append(rm.Containers, describe(containerName(c.Names, c.ID), c.Labels))
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return rm, errors.Join(append(errs, fmt.Errorf("docker: list networks labelled %s: %w", label, err))...)
	}
	for _, n := range ns.Items {
		if skip != nil && skip(n.Labels) {
			continue
		}
		if _, err := cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("docker: remove network %s: %w", n.Name, err))
			continue
		}
		rm.Networks = append(rm.Networks, describe(n.Name, n.Labels))
	}
	if err := removeBuiltByLabel(ctx, cli, label, skip, &rm); err != nil {
		errs = append(errs, err)
	}
	return rm, errors.Join(errs...)
}

// removeBuiltByLabel removes the volumes and images carrying label (a
// Compose project's named volumes and built images), except those skip
// keeps; only what a run labelled, never a volume it found.
func removeBuiltByLabel(ctx context.Context, cli *client.Client, label string, skip func(map[string]string) bool, rm *Removed) error {
	var errs []error
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return fmt.Errorf("docker: list volumes labelled %s: %w", label, err)
	}
	for _, v := range vs.Items {
		if skip != nil && skip(v.Labels) {
			continue
		}
		if _, err := cli.VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("docker: remove volume %s: %w", v.Name, err))
			continue
		}
		rm.Volumes = append(rm.Volumes, describe(v.Name, v.Labels))
	}
	is, err := cli.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("docker: list images labelled %s: %w", label, err))...)
	}
	for _, im := range is.Items {
		if skip != nil && skip(im.Labels) {
			continue
		}
		if _, err := cli.ImageRemove(ctx, im.ID, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("docker: remove image %s: %w", short(im.ID), err))
			continue
		}
		rm.Images = append(rm.Images, describe(strings.Join(im.RepoTags, ","), im.Labels))
	}
	return errors.Join(errs...)
}

// leftovers lists the containers and networks carrying label.
func leftovers(ctx context.Context, cli *client.Client, label string) ([]string, error) {
	var out []string
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return nil, fmt.Errorf("docker: list containers labelled %s: %w", label, err)
	}
	for _, c := range cs.Items {
		out = append(out, "container "+containerName(c.Names, c.ID))
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return nil, fmt.Errorf("docker: list networks labelled %s: %w", label, err)
	}
	for _, n := range ns.Items {
		out = append(out, "network "+n.Name)
	}
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return nil, fmt.Errorf("docker: list volumes labelled %s: %w", label, err)
	}
	for _, v := range vs.Items {
		out = append(out, "volume "+v.Name)
	}
	is, err := cli.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return nil, fmt.Errorf("docker: list images labelled %s: %w", label, err)
	}
	for _, im := range is.Items {
		out = append(out, "image "+strings.Join(im.RepoTags, ","))
	}
	return out, nil
}

// Leftovers lists what is left of one run (by its run ID): empty after a
// clean teardown.
func Leftovers(ctx context.Context, cli *client.Client, run string) ([]string, error) {
	return leftovers(ctx, cli, LabelRun+"="+run)
}

func containerName(names []string, id string) string {
	if len(names) > 0 {
		return strings.TrimPrefix(names[0], "/")
	}
	return short(id)
}

func describe(name string, labels map[string]string) string {
	return fmt.Sprintf("%s (run %s, scenario %s)", name, labels[LabelRun], labels[LabelScenario])
}

// Report writes what Clean removed to w, a line each, saying "would
// remove" for a dry run.
func (r Removed) Report(w io.Writer, dryRun bool) {
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	for _, c := range r.Containers {
		fmt.Fprintf(w, "%s container %s\n", verb, c)
	}
	for _, n := range r.Networks {
		fmt.Fprintf(w, "%s network %s\n", verb, n)
	}
	for _, v := range r.Volumes {
		fmt.Fprintf(w, "%s volume %s\n", verb, v)
	}
	for _, im := range r.Images {
		fmt.Fprintf(w, "%s image %s\n", verb, im)
	}
	for _, run := range r.Skipped {
		fmt.Fprintf(w, "left run %s alone: its harness still runs (--all removes it too)\n", run)
	}
	if len(r.Containers)+len(r.Networks)+len(r.Volumes)+len(r.Images) == 0 {
		fmt.Fprintln(w, "nothing left behind by chaosrun runs")
	}
}
