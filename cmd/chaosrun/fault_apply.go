package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/judge"
	"github.com/chaosrun/chaosrun/scenario"
)

// applyFlags are fault apply's flags.
type applyFlags struct {
	faults.ApplyOptions
	report judge.ReportFlags
}

// newFaultApplyCmd runs a scenario's fault schedule against a Toxiproxy
// whose proxies exist (see faults.ApplySchedule).
func newFaultApplyCmd(st *State) *cobra.Command {
	var f applyFlags
	cmd := &cobra.Command{
		Use:               "apply [--toxiproxy URL] [--token T] [--delay D] [--wait D] SCENARIO.yaml",
		Short:             "run a scenario's fault schedule against a Toxiproxy whose proxies exist",
		Long:              "Run a scenario's fault schedule against a Toxiproxy whose proxies exist (what the Kubernetes export's Job runs); what is in force is reverted when it is stopped.",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, u, err := f.check(cmd.Context(), st, args[0])
			if err != nil || sc == nil {
				return err
			}
			rep, zero, closeRep, err := f.report.Open(st.files(), st.Stderr, f.Delay, f.Wait)
			if err != nil {
				return exitcode.Fail(exitUsage, err)
			}
			defer closeRep()
			failed, err, rerr := f.Apply(cmd.Context(), u, sc, zero, rep, st.Stdout)
			if rerr != nil {
				printLines(st, "chaosrun fault apply: reporting", rerr)
				err = errors.Join(err, errors.New("some events did not reach the judge or the events file"))
			}
			switch {
			case cmd.Context().Err() != nil:
				return exitcode.Failf(exitInterrupted, "stopped; the faults in force were reverted")
			case err != nil:
				return exitcode.Fail(exitRunError, err)
			case failed > 0:
				return exitcode.Failf(exitRunError, "%d fault action(s) failed", failed)
			}
			return nil
		},
	}
	f.Register(cmd.Flags(), st.Getenv("CHAOSRUN_TOKEN"))
	f.report.Register(cmd.Flags(), st.Getenv("CHAOSRUN_RESULTS_TOKEN"))
	return cmd
}

// check checks the flags and loads the scenario; a scenario without
// faults is said and comes back nil.
func (f *applyFlags) check(ctx context.Context, st *State, file string) (*scenario.Scenario, *url.URL, error) {
	if err := f.CheckTimes(); err != nil {
		return nil, nil, exitcode.Fail(exitUsage, err)
	}
	sc, err := loadScenario(ctx, st, file, nil)
	if err != nil {
		return nil, nil, scenarioFailed(ctx, st, err)
	}
	u, err := f.Toxiproxy(sc)
	if err != nil {
		return nil, nil, exitcode.Fail(exitUsage, err)
	}
	if len(sc.Faults) == 0 {
		fmt.Fprintf(st.Stdout, "%s has no faults: nothing to apply\n", sc.Name)
		return nil, nil, nil
	}
	return sc, u, nil
}
