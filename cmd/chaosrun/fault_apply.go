package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/judge"
)

// newFaultApplyCmd runs a scenario's fault schedule against a Toxiproxy
// whose proxies exist (see faults.ApplySchedule), its events reported to
// a judge or a file.
func newFaultApplyCmd(st *State) *cobra.Command {
	var (
		f      faults.ApplyOptions
		report judge.ReportFlags
	)
	cmd := &cobra.Command{
		Use:               "apply [--toxiproxy URL] [--token T] [--delay D] [--wait D] SCENARIO.yaml",
		Short:             "run a scenario's fault schedule against a Toxiproxy whose proxies exist",
		Long:              "Run a scenario's fault schedule against a Toxiproxy whose proxies exist (what the Kubernetes export's Job runs); what is in force is reverted when it is stopped.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckTimes(); err != nil {
				return exitcode.Fail(exitUsage, err)
			}
			sc, err := st.scenarios().Scenario(cmd.Context(), args[0], nil, st.Stderr)
			if err != nil {
				return err
			}
			u, err := f.Target(sc, st.Stdout)
			if err != nil || u == nil {
				return err
			}
			rep, zero, closeRep, err := report.Open(cmd.Context(), st.files(), st.Stderr, f.Delay, f.Wait)
			if err != nil {
				return exitcode.Fail(exitUsage, err)
			}
			defer closeRep()
			return f.Run(cmd.Context(), u, sc, zero, rep, st.Stdout)
		},
	}
	f.Register(cmd.Flags(), st.Getenv("CHAOSRUN_TOKEN"))
	report.Register(cmd.Flags(), st.Getenv("CHAOSRUN_RESULTS_TOKEN"))
	return cmd
}
