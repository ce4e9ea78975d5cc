package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// newDoctorCmd checks what runs need and says what to do about each
// problem: exit 0 when everything for both testbeds is in place, 1
// otherwise. k6 is needed only by workloads with engine: k6: its absence
// is a note, not a problem.
func newDoctorCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "check Docker, the images and the k6 build (for engine: k6); say what to fix",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			problems := 0
			for _, f := range docker.Checkup(ctx) {
				if f.Fix == "" {
					fmt.Fprintf(st.Stdout, "ok   %-8s %s\n", f.What, f.Detail)
					continue
				}
				problems++
				fmt.Fprintf(st.Stdout, "FIX  %-8s %s\n              → %s\n", f.What, f.Detail, f.Fix)
			}
			k6 := k6Finding(st)
			if k6.Fix == "" {
				fmt.Fprintf(st.Stdout, "ok   %-8s %s\n", k6.What, k6.Detail)
			} else {
				fmt.Fprintf(st.Stdout, "note %-8s %s (needed only for workloads with engine: k6; native workloads run without it)\n              → %s\n", k6.What, k6.Detail, k6.Fix)
			}
			if problems > 0 {
				fmt.Fprintf(st.Stdout, "%d problem(s)\n", problems)
				return exit(exitBreach)
			}
			fmt.Fprintln(st.Stdout, "all good")
			return nil
		},
	}
}

// k6Finding says whether k6 is built for the extension's current source
// (the checkout's, else the one embedded in this binary).
func k6Finding(st *State) docker.Finding {
	o := k6Options(st)
	path, err := o.CachedK6()
	if err != nil {
		return docker.Finding{What: "k6", Detail: err.Error(), Fix: "point CHAOSRUN_ROOT at the repository, or unset it to build from the sources embedded in chaosrun"}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode()&0o111 == 0 {
		return docker.Finding{What: "k6", Detail: "no k6 " + k6build.K6Version + " with xk6-resilience built for this extension source yet",
			Fix: "the next run of an engine: k6 workload builds it (a cold build takes a few minutes), or pass --k6 PATH"}
	}
	return docker.Finding{What: "k6", Detail: path}
}
