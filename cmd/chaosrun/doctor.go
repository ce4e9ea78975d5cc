package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/doctor"
)

// newDoctorCmd checks what runs need and says what to fix (doctor.Run).
func newDoctorCmd(st *State) *cobra.Command {
	testbed := "local"
	cmd := &cobra.Command{
		Use:   "doctor [--testbed local|docker]",
		Short: "check what the testbed needs (Docker and its images for --testbed docker; k6 for engine: k6); say what to fix",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return doctor.Run(cmd.Context(), st.Stdout, k6Options(st), testbed)
		},
	}
	cmd.Flags().StringVar(&testbed, "testbed", testbed, "the testbed to check for: local or docker (its problems count only then)")
	return cmd
}
