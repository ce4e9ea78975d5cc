package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/judge"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// applyFlags are fault apply's flags.
type applyFlags struct {
	api, token  string
	delay, wait time.Duration
	report      judge.ReportFlags
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
			var start time.Time
			rep, zero, closeRep, err := f.report.Open(st.files(), st.Stderr, f.delay, f.wait)
			if err != nil {
				return fail(exitUsage, err)
			}
			defer closeRep()
			failed, err := faults.ApplyScheduleFrom(cmd.Context(), u.String(), sc, zero, f.wait,
				func(t time.Time, proxies []string) {
					start = t
					fmt.Fprintf(st.Stdout, "toxiproxy at %s has the %d proxies of %s; the schedule's zero is %s\n", u.Redacted(), len(proxies), sc.Name, t.UTC().Format(time.RFC3339))
				},
				func(ev record.FaultEvent) {
					fmt.Fprintln(st.Stdout, faultLine(ev, start))
					rep.Emit(context.WithoutCancel(cmd.Context()), ev)
				})
			if rerr := rep.Done(context.WithoutCancel(cmd.Context()), failed); rerr != nil {
				printLines(st, "chaosrun fault apply: reporting", rerr)
				err = errors.Join(err, errors.New("some events did not reach the judge or the events file"))
			}
			switch {
			case cmd.Context().Err() != nil:
				return failf(exitInterrupted, "stopped; the faults in force were reverted")
			case err != nil:
				return fail(exitRunError, err)
			case failed > 0:
				return failf(exitRunError, "%d fault action(s) failed", failed)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.api, "toxiproxy", "http://127.0.0.1:8474", "base URL of Toxiproxy's API")
	fl.StringVar(&f.token, "token", st.Getenv("CHAOSRUN_TOKEN"), "the Toxiproxy API's token (env CHAOSRUN_TOKEN)")
	fl.DurationVar(&f.delay, "delay", 0, "time from Toxiproxy being ready to the schedule's zero (the faults' start offsets count from there)")
	fl.DurationVar(&f.wait, "wait", 5*time.Minute, "how long to wait for Toxiproxy and the scenario's proxies (and, with --report-to, for load to start)")
	f.report.Register(cmd.Flags(), st.Getenv("CHAOSRUN_RESULTS_TOKEN"))
	return cmd
}

// check checks the flags and loads the scenario; a scenario without
// faults is said and comes back nil.
func (f *applyFlags) check(ctx context.Context, st *State, file string) (*scenario.Scenario, *url.URL, error) {
	if f.delay < 0 || f.wait <= 0 {
		return nil, nil, failf(exitUsage, "--delay %s, --wait %s: want --delay >= 0 and --wait > 0", f.delay, f.wait)
	}
	sc, err := loadScenario(ctx, st, file, nil)
	if err != nil {
		return nil, nil, scenarioFailed(ctx, st, err)
	}
	for _, fl := range sc.Faults {
		if faults.IsHostKind(fl.Kind) {
			return nil, nil, failf(exitUsage, "fault %s is a %s: host faults act on containers, not through Toxiproxy (run them with `chaosrun run --testbed docker`)", fl.Name, fl.Kind)
		}
	}
	u, err := url.Parse(f.api)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, failf(exitUsage, "--toxiproxy %q is not an http(s) URL", f.api)
	}
	if f.token != "" {
		u.User = url.UserPassword("", f.token)
	}
	if len(sc.Faults) == 0 {
		fmt.Fprintf(st.Stdout, "%s has no faults: nothing to apply\n", sc.Name)
		return nil, nil, nil
	}
	return sc, u, nil
}

// faultLine is one event as a line: what happened, when against when it
// was due, and to what.
func faultLine(ev record.FaultEvent, start time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %s at +%.3fs (due +%s): %s", ev.Action, ev.Fault,
		ev.Actual.Sub(start).Seconds(), ev.Scheduled.Sub(start), ev.Detail)
	if ev.Error != "" {
		b.WriteString(": " + ev.Error)
	}
	return b.String()
}
