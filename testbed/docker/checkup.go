package docker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/moby/moby/client"
)

// Finding is one line of a check-up: what was looked at, what was found
// and, for a problem, what to do about it.
type Finding struct {
	What, Detail string
	// Fix is empty when all is well.
	Fix string
}

// Checkup checks what the Docker testbed needs: a reachable engine, the
// chaosrun image, the host programs' images, and no objects left behind
// by runs that did not tear down.
func Checkup(ctx context.Context) []Finding {
	cli, err := NewClient(ctx)
	if err != nil {
		return []Finding{{"docker", err.Error(), "start the Docker engine or set DOCKER_HOST; only --testbed docker needs it (the local testbed does not)"}}
	}
	defer cli.Close()
	out := []Finding{{What: "docker", Detail: "engine answers at " + cli.DaemonHost()}}
	if v, err := cli.ServerVersion(ctx, client.ServerVersionOptions{}); err == nil {
		out[0].Detail = fmt.Sprintf("engine %s (API %s) at %s", v.Version, v.APIVersion, cli.DaemonHost())
	}
	if imgs, err := ListImages(ctx, cli); err != nil {
		out = append(out, Finding{"images", err.Error(), "check the engine's logs"})
	} else {
		out = append(out, imageFindings(imgs, installed)...)
	}
	left, err := Clean(ctx, cli, CleanOptions{DryRun: true})
	if err == nil && len(left.Containers)+len(left.Networks) > 0 {
		out = append(out, Finding{"leftover", fmt.Sprintf("%d container(s), %d network(s) from runs that did not tear down", len(left.Containers), len(left.Networks)), "run `chaosrun clean`"})
	}
	return out
}

func installed(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// imageFindings says which of the images the testbed runs are there.
func imageFindings(imgs []Image, installed func(string) bool) []Finding {
	var chaosrun, host []string
	for _, im := range imgs {
		if strings.HasPrefix(im.Ref, ChaosrunRepo+":") {
			chaosrun = append(chaosrun, im.Ref)
		} else {
			host = append(host, im.Ref)
		}
	}
	var out []Finding
	if len(chaosrun) == 0 {
		out = append(out, Finding{"images", "no chaosrun image yet", "run `chaosrun images` (or any `chaosrun run --testbed docker`, which builds it)"})
	} else {
		out = append(out, Finding{What: "images", Detail: fmt.Sprintf("%d chaosrun image(s), newest %s (a changed binary gets a new one on its next docker run)", len(chaosrun), chaosrun[0])})
	}
	for _, hp := range HostPrograms {
		switch {
		case slices.Contains(host, hp.Ref):
			out = append(out, Finding{What: "images", Detail: hp.Ref + " (from " + hp.Binary + ")"})
		case !installed(hp.Binary):
			out = append(out, Finding{"images", hp.Ref + " missing and " + hp.Binary + " is not installed", "apt-get install " + hp.Package + ", then `chaosrun images`"})
		default:
			out = append(out, Finding{"images", hp.Ref + " not built yet", "run `chaosrun images` (docker runs that need it also build it)"})
		}
	}
	return out
}
