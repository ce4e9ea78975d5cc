package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/runner/setup"
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
			return setup.Images(cmd.Context(), k6Options(st), st.Executable, list, prune, st.Stdout, st.Stderr)
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "only list the images; build nothing")
	cmd.Flags().BoolVar(&prune, "prune", false, "after building, remove the older images chaosrun built (those no container uses)")
	cmd.MarkFlagsMutuallyExclusive("list", "prune")
	return cmd
}
