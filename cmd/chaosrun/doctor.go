package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// cmdDoctor checks what runs need: a reachable Docker engine (for
// --testbed docker), the images, and the k6 build; for each problem it says
// what to do. It exits 0 when everything for both testbeds is in place, 1
// otherwise.
func cmdDoctor(ctx context.Context, st *State, args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(st.Stderr, "usage: chaosrun doctor   (checks Docker, the images and the k6 build)")
		return exitUsage
	}
	problems := 0
	ok := func(what, detail string) { fmt.Fprintf(st.Stdout, "ok   %-8s %s\n", what, detail) }
	bad := func(what, detail, fix string) {
		problems++
		fmt.Fprintf(st.Stdout, "FIX  %-8s %s\n              → %s\n", what, detail, fix)
	}

	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cli, err := docker.NewClient(cctx)
	if err != nil {
		bad("docker", err.Error(), "start the Docker engine or set DOCKER_HOST; only --testbed docker needs it (the local testbed does not)")
	} else {
		defer cli.Close()
		v, verr := cli.ServerVersion(cctx, client.ServerVersionOptions{})
		if verr == nil {
			ok("docker", fmt.Sprintf("engine %s (API %s) at %s", v.Version, v.APIVersion, cli.DaemonHost()))
		} else {
			ok("docker", "engine answers at "+cli.DaemonHost())
		}
		imgs, err := docker.ListImages(cctx, cli)
		switch {
		case err != nil:
			bad("images", err.Error(), "check the engine's logs")
		default:
			var chaosrun, host []string
			for _, im := range imgs {
				if strings.HasPrefix(im.Ref, docker.ChaosrunRepo+":") {
					chaosrun = append(chaosrun, im.Ref)
				} else {
					host = append(host, im.Ref)
				}
			}
			if len(chaosrun) == 0 {
				bad("images", "no chaosrun image yet", "run `chaosrun images` (or any `chaosrun run --testbed docker`, which builds it)")
			} else {
				ok("images", fmt.Sprintf("%d chaosrun image(s), newest %s (a changed binary gets a new one on its next docker run)", len(chaosrun), chaosrun[0]))
			}
			for _, hp := range docker.HostPrograms {
				if slices.Contains(host, hp.Ref) {
					ok("images", hp.Ref+" (from "+hp.Binary+")")
				} else if _, err := os.Stat(hp.Binary); err != nil {
					bad("images", hp.Ref+" missing and "+hp.Binary+" is not installed", "apt-get install "+hp.Package+", then `chaosrun images`")
				} else {
					bad("images", hp.Ref+" not built yet", "run `chaosrun images` (docker runs that need it also build it)")
				}
			}
		}
		left, err := docker.Clean(cctx, cli, docker.CleanOptions{DryRun: true})
		if err == nil && len(left.Containers)+len(left.Networks) > 0 {
			bad("leftover", fmt.Sprintf("%d container(s), %d network(s) from runs that did not tear down", len(left.Containers), len(left.Networks)), "run `chaosrun clean`")
		}
	}

	root, rerr := k6build.FindRoot("")
	if rerr != nil {
		bad("k6", rerr.Error(), "run from the repository, or pass --k6 PATH to `chaosrun run`")
	} else if path, err := k6Cached(st, root); err != nil {
		bad("k6", err.Error(), "check the repository's xk6-resilience folder")
	} else if fi, err := os.Stat(path); err != nil || fi.Mode()&0o111 == 0 {
		bad("k6", "no k6 "+k6build.K6Version+" with xk6-resilience built for this extension source yet", "the next `chaosrun run` builds it (a cold build takes a few minutes), or pass --k6 PATH")
	} else {
		ok("k6", path)
	}
	if problems > 0 {
		fmt.Fprintf(st.Stdout, "%d problem(s)\n", problems)
		return exitBreach
	}
	fmt.Fprintln(st.Stdout, "all good")
	return exitOK
}

// k6Cached is where k6build keeps the k6 of this extension source.
func k6Cached(st *State, root string) (string, error) {
	hash, err := k6build.SourceHash(filepath.Join(root, k6build.ExtensionDir))
	if err != nil {
		return "", err
	}
	cache := st.Getenv("CHAOSRUN_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(base, "chaosrun")
	}
	return filepath.Join(cache, "k6-"+k6build.K6Version+"-"+hash), nil
}
