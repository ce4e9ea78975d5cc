package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// dockerCacheDir is where the static chaosrun binary for the images is
// built: $CHAOSRUN_CACHE/docker, else the user cache folder's.
func dockerCacheDir(st *State) string {
	if c := st.Getenv("CHAOSRUN_CACHE"); c != "" {
		return filepath.Join(c, "docker")
	}
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "chaosrun", "docker")
	}
	return filepath.Join(os.TempDir(), "chaosrun-docker")
}

// dockerImage returns the chaosrun image of this build, building the
// static binary and the image when they are missing.
func dockerImage(ctx context.Context, st *State, root string) (string, error) {
	cli, err := docker.NewClient(ctx)
	if err != nil {
		return "", fmt.Errorf("%w (is Docker running? `chaosrun doctor` says more)", err)
	}
	defer cli.Close()
	bin, err := docker.StaticBinary(ctx, st.Executable, root, dockerCacheDir(st), st.Stderr)
	if err != nil {
		return "", err
	}
	img, err := docker.ChaosrunImage(ctx, cli, bin, st.Stderr)
	if err != nil {
		return "", err
	}
	return img.Ref, nil
}

// newTestbed is the testbed --testbed names.
func newTestbed(st *State, rs runSettings, sc *scenario.Scenario, logDir string) testbed.Testbed {
	if rs.bed == "docker" {
		return &docker.Testbed{Image: rs.image, LogDir: logDir, Seed: sc.Seed, Progress: st.Stderr}
	}
	return &testbed.Local{Binary: st.Executable, LogDir: logDir, Seed: sc.Seed}
}

// cmdImages builds the images the Docker testbed runs (the chaosrun image
// and the third-party images bring-your-own-service scenarios use) and
// lists every image chaosrun built.
func cmdImages(ctx context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	list := fs.Bool("list", false, "only list the images; build nothing")
	prune := fs.Bool("prune", false, "after building, remove the older images chaosrun built (those no container uses)")
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: chaosrun images [--list | --prune]   (builds the Docker testbed's images, then lists them)")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 || *list && *prune {
		fs.Usage()
		return exitUsage
	}
	cli, err := docker.NewClient(ctx)
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun images: %v\n", err)
		return exitRunError
	}
	defer cli.Close()
	if !*list {
		root, _ := k6build.FindRoot("")
		t0 := time.Now()
		bin, err := docker.StaticBinary(ctx, st.Executable, root, dockerCacheDir(st), st.Stderr)
		if err != nil {
			fmt.Fprintf(st.Stderr, "chaosrun images: %v\n", err)
			return exitRunError
		}
		img, err := docker.ChaosrunImage(ctx, cli, bin, st.Stderr)
		if err != nil {
			fmt.Fprintf(st.Stderr, "chaosrun images: %v\n", err)
			return exitRunError
		}
		fmt.Fprintf(st.Stderr, "%s %s (%s)\n", img.Ref, builtWord(img.Built), time.Since(t0).Round(time.Millisecond))
		keep := []string{img.Ref}
		for _, hp := range docker.HostPrograms {
			t0 := time.Now()
			img, err := hp.Ensure(ctx, cli, st.Stderr)
			if err != nil {
				fmt.Fprintf(st.Stderr, "chaosrun images: %v\n", err)
				return exitRunError
			}
			fmt.Fprintf(st.Stderr, "%s %s from %s (%s)\n", img.Ref, builtWord(img.Built), hp.Binary, time.Since(t0).Round(time.Millisecond))
			keep = append(keep, img.Ref)
		}
		if *prune {
			removed, err := docker.PruneImages(ctx, cli, keep)
			for _, r := range removed {
				fmt.Fprintf(st.Stderr, "removed image %s\n", r)
			}
			if err != nil {
				fmt.Fprintf(st.Stderr, "chaosrun images: %v\n", err)
			}
		}
	}
	imgs, err := docker.ListImages(ctx, cli)
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun images: %v\n", err)
		return exitRunError
	}
	fmt.Fprintf(st.Stdout, "%-34s %-20s %-14s %9s  %s\n", "IMAGE", "KIND", "ID", "SIZE", "CREATED")
	for _, im := range imgs {
		fmt.Fprintf(st.Stdout, "%-34s %-20s %-14s %8.1fM  %s\n", im.Ref, im.Kind, shortID(im.ID), float64(im.Size)/1e6, im.Created.Format(time.DateTime))
	}
	return exitOK
}

func builtWord(built bool) string {
	if built {
		return "built"
	}
	return "present (reused)"
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
