package main

import (
	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/gameday"
)

// newGamedayCmd runs a game day: steady load, a page to inject faults by
// hand and watch the SLOs live, stop conditions, and the run's report at
// the end.
func newGamedayCmd(st *State) *cobra.Command {
	c := gameday.NewCommand()
	cmd := &cobra.Command{
		Use:   "gameday [flags] SCENARIO.yaml",
		Short: "steady load, a live page to inject faults and watch SLOs, stop conditions",
		Long: `Stand up the scenario's testbed, run its workload at steady load until stopped
(Ctrl-C, the page's Stop button or --max-duration) and serve a page to inject and
clear faults while the scenario's SLOs are shown live. OUT-DIR/SCENARIO-gameday
gets the run's record and reports.`,
		Example:           "  chaosrun gameday --guard check-p99-isolated --grace 5s scenarios/bank-slow-vault.yaml",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.Run(cmd.Context(), st.env(), args[0])
		},
	}
	fl, f := cmd.Flags(), &c.Flags
	fl.StringArrayVar(&f.Sets, "set", nil, "override a scenario value, e.g. bank.bulkheads=off (repeatable)")
	fl.StringArrayVar(&f.Guards, "guard", nil, "assertion of the scenario that is a stop condition: when it breaches for longer than --grace, every fault is reverted (repeatable)")
	allowFlag(fl, &f.Allow)
	fl.DurationVar(&f.Grace, "grace", f.Grace, "how long a guard may breach before every fault is reverted")
	fl.DurationVar(&f.Slide, "window", f.Slide, "sliding window of the live SLOs")
	fl.StringVar(&f.Listen, "listen", f.Listen, "address of the game day's page and API (other than loopback needs --token)")
	fl.StringVar(&f.Token, "token", "", "token the page and API require (default: none on loopback; env CHAOSRUN_GAMEDAY_TOKEN)")
	fl.DurationVar(&f.MaxDuration, "max-duration", f.MaxDuration, "stop the load after this long at the latest")
	k6Flag(fl, &f.K6)
	fl.StringVar(&f.OutDir, "out-dir", f.OutDir, "folder for the record, report and logs (sub-folder SCENARIO-gameday)")
	setupFlags(fl, &c.Setup)
	resultsFlags(fl, &c.Results, st.Getenv)
	testbedCompletion(cmd)
	return cmd
}
