package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// ApplyOptions are chaosrun fault apply's flags: the Toxiproxy to act
// through and when the schedule starts.
type ApplyOptions struct {
	API, Token  string
	Delay, Wait time.Duration
}

// DefaultApplyOptions are fault apply's defaults: Toxiproxy's own API
// address on loopback, five minutes' wait.
func DefaultApplyOptions() ApplyOptions {
	return ApplyOptions{API: "http://127.0.0.1:8474", Wait: 5 * time.Minute}
}

// CheckTimes checks --delay and --wait; errors are usage errors.
func (o *ApplyOptions) CheckTimes() error {
	if o.Delay < 0 || o.Wait <= 0 {
		return fmt.Errorf("--delay %s, --wait %s: want --delay >= 0 and --wait > 0", o.Delay, o.Wait)
	}
	return nil
}

// Toxiproxy checks that sc's faults all act through Toxiproxy and gives
// the API's URL, with the token; errors are usage errors.
func (o *ApplyOptions) Toxiproxy(sc *scenario.Scenario) (*url.URL, error) {
	for _, fl := range sc.Faults {
		if IsHostKind(fl.Kind) {
			return nil, fmt.Errorf("fault %s is a %s: host faults act on containers, not through Toxiproxy (run them with `chaosrun run --testbed docker`)", fl.Name, fl.Kind)
		}
	}
	u, err := url.Parse(o.API)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--toxiproxy %q is not an http(s) URL", o.API)
	}
	if o.Token != "" {
		u.User = url.UserPassword("", o.Token)
	}
	return u, nil
}

// Target checks the flags against sc (see Toxiproxy) and gives the API's
// URL; a scenario without faults is said on stdout and gives nil. Errors
// end the command (exit 2).
func (o *ApplyOptions) Target(sc *scenario.Scenario, stdout io.Writer) (*url.URL, error) {
	u, err := o.Toxiproxy(sc)
	if err != nil {
		return nil, exitcode.Fail(exitcode.Usage, err)
	}
	if len(sc.Faults) == 0 {
		fmt.Fprintf(stdout, "%s has no faults: nothing to apply\n", sc.Name)
		return nil, nil
	}
	return u, nil
}

// Run applies sc's schedule through the Toxiproxy at u (see Apply) and
// ends the command as fault apply does: 130 once stopped (what was in
// force reverted), 3 when an action failed or events did not reach
// where they go.
func (o *ApplyOptions) Run(ctx context.Context, u *url.URL, sc *scenario.Scenario, zero func(context.Context) (time.Time, error), events Events, stdout io.Writer) error {
	failed, err, rerr := o.Apply(ctx, u, sc, zero, events, stdout)
	if rerr != nil {
		err = errors.Join(err, errors.New("some events did not reach the judge or the events file"))
	}
	switch {
	case ctx.Err() != nil:
		return exitcode.Failf(exitcode.Interrupted, "stopped; the faults in force were reverted")
	case err != nil:
		return exitcode.Fail(exitcode.RunError, err)
	case failed > 0:
		return exitcode.Failf(exitcode.RunError, "%d fault action(s) failed", failed)
	}
	return nil
}

// Events hears of each event of an applied schedule and of its end.
type Events interface {
	Emit(ctx context.Context, ev record.FaultEvent)
	Done(ctx context.Context, failed int) error
}

// Apply runs sc's schedule through the Toxiproxy at u from zero (see
// ApplyScheduleFrom), saying on stdout when it starts and each event,
// which events also hears of (they say their own failures). rerr is the
// events' failure to be told.
func (o *ApplyOptions) Apply(ctx context.Context, u *url.URL, sc *scenario.Scenario, zero func(context.Context) (time.Time, error), events Events, stdout io.Writer) (failed int, err, rerr error) {
	var start time.Time
	failed, err = ApplyScheduleFrom(ctx, u.String(), sc, zero, o.Wait,
		func(t time.Time, proxies []string) {
			start = t
			fmt.Fprintf(stdout, "toxiproxy at %s has the %d proxies of %s; the schedule's zero is %s\n", u.Redacted(), len(proxies), sc.Name, t.UTC().Format(time.RFC3339))
		},
		func(ev record.FaultEvent) {
			fmt.Fprintln(stdout, EventLine(ev, start))
			events.Emit(context.WithoutCancel(ctx), ev)
		})
	return failed, err, events.Done(context.WithoutCancel(ctx), failed)
}

// EventLine is one event as a line: what happened, when against when it
// was due, and to what.
func EventLine(ev record.FaultEvent, start time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %s at +%.3fs (due +%s): %s", ev.Action, ev.Fault,
		ev.Actual.Sub(start).Seconds(), ev.Scheduled.Sub(start), ev.Detail)
	if ev.Error != "" {
		b.WriteString(": " + ev.Error)
	}
	return b.String()
}
