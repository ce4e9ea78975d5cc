package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/runner/batch"
	"github.com/chaosrun/chaosrun/runner/setup"
	"github.com/chaosrun/chaosrun/testbed/docker"
)

// newImagesCmd builds the images the Docker testbed runs (the chaosrun
// image and the third-party images bring-your-own-service scenarios use)
// and lists every image chaosrun built.
func newImagesCmd(st *State) *cobra.Command {
	var list, prune bool
	cmd := &cobra.Command{
		Use:   "images [--list | --prune]",
		Short: "build and list the Docker testbed's images (never pulled)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cli, err := docker.NewClient(ctx)
			if err != nil {
				return exitcode.Fail(exitRunError, err)
			}
			defer cli.Close()
			if !list {
				root, _ := k6Options(st).RepoRoot()
				keep, err := docker.EnsureImages(ctx, cli, setup.ImageOptions(k6Options(st), st.Executable, root))
				if err != nil {
					return exitcode.Fail(exitRunError, err)
				}
				if prune {
					removed, err := docker.PruneImages(ctx, cli, keep)
					for _, r := range removed {
						fmt.Fprintf(st.Stderr, "removed image %s\n", r)
					}
					batch.PrintLines(st.Stderr, "chaosrun images", err)
				}
			}
			imgs, err := docker.ListImages(ctx, cli)
			if err != nil {
				return exitcode.Fail(exitRunError, err)
			}
			docker.WriteImages(st.Stdout, imgs)
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "only list the images; build nothing")
	cmd.Flags().BoolVar(&prune, "prune", false, "after building, remove the older images chaosrun built (those no container uses)")
	cmd.MarkFlagsMutuallyExclusive("list", "prune")
	return cmd
}
