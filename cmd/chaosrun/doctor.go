package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/doctor"
	"github.com/chaosrun/chaosrun/internal/exitcode"
)

// newDoctorCmd checks what runs need and says what to do about each
// problem: exit 0 when everything for both testbeds is in place, 1
// otherwise (see doctor.Check).
func newDoctorCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "check Docker, the images and the k6 build (for engine: k6); say what to fix",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			if doctor.Check(ctx, st.Stdout, k6Options(st)) > 0 {
				return exitcode.Exit(exitBreach)
			}
			return nil
		},
	}
}
