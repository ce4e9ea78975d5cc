package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/internal/buildinfo"
)

func newVersionCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print chaosrun's version and commit, and the versions of k6 and Toxiproxy",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { buildinfo.Read().Print(st.Stdout) },
	}
}
