package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/judge"
)

// newFaultApplyCmd runs a scenario's fault schedule against a Toxiproxy
// whose proxies exist (see faults.ApplySchedule), its events reported to
// a judge or a file.
func newFaultApplyCmd(st *State) *cobra.Command {
	f, report := faults.DefaultApplyOptions(), judge.ReportFlags{}
	cmd := &cobra.Command{
		Use:               "apply [--toxiproxy URL] [--token T] [--delay D] [--wait D] SCENARIO.yaml",
		Short:             "run a scenario's fault schedule against a Toxiproxy whose proxies exist",
		Long:              "Run a scenario's fault schedule against a Toxiproxy whose proxies exist (what the Kubernetes export's Job runs); what is in force is reverted when it is stopped.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return report.ApplyFaults(cmd.Context(), st.scenarios(), f, args[0], st.Stdout, st.Stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.API, "toxiproxy", f.API, "base URL of Toxiproxy's API")
	fl.StringVar(&f.Token, "token", st.Getenv("CHAOSRUN_TOKEN"), "the Toxiproxy API's token (env CHAOSRUN_TOKEN)")
	fl.DurationVar(&f.Delay, "delay", 0, "time from Toxiproxy being ready to the schedule's zero (the faults' start offsets count from there)")
	fl.DurationVar(&f.Wait, "wait", f.Wait, "how long to wait for Toxiproxy and the scenario's proxies (and, with --report-to, for load to start)")
	fl.StringVar(&report.To, "report-to", "", "a judge's events endpoint, http(s)://HOST:PORT: the schedule's zero is load's start there (plus --delay), and each event is sent to it")
	fl.StringVar(&report.Token, "report-token", st.Getenv("CHAOSRUN_RESULTS_TOKEN"), "the judge's token (env CHAOSRUN_RESULTS_TOKEN)")
	fl.StringVar(&report.CA, "report-ca", "", "PEM CA to trust for an https --report-to")
	fl.StringVar(&report.EventsOut, "events-out", "", "write each event to this file, one JSON object a line (chaosrun judge --faults reads it)")
	return cmd
}
