package setup

import (
	"context"
	"fmt"
	"io"

	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// Images is chaosrun images: unless list, it builds the images the Docker
// testbed runs (never pulled; the chaosrun image from executable) and,
// with prune, removes the older ones chaosrun built; then it lists every
// image chaosrun built on stdout.
func Images(ctx context.Context, k6 k6build.Options, executable string, list, prune bool, stdout, stderr io.Writer) error {
	cli, err := docker.NewClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if !list {
		root, _ := k6.RepoRoot()
		keep, err := docker.EnsureImages(ctx, cli, ImageOptions(k6, executable, root))
		if err != nil {
			return err
		}
		if prune {
			removed, err := docker.PruneImages(ctx, cli, keep)
			for _, r := range removed {
				fmt.Fprintf(stderr, "removed image %s\n", r)
			}
			report.PrintLines(stderr, "chaosrun images", err)
		}
	}
	imgs, err := docker.ListImages(ctx, cli)
	if err != nil {
		return err
	}
	docker.WriteImages(stdout, imgs)
	return nil
}
