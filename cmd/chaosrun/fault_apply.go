package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/clock"
	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/record"
)

// cmdFaultApply runs a scenario's fault schedule against a Toxiproxy API
// whose proxies already exist (what the Kubernetes export's fault Job
// runs): it waits for them, then applies and reverts each fault on time,
// and reverts what is in force when it is stopped.
func cmdFaultApply(ctx context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("fault apply", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	api := fs.String("toxiproxy", "http://127.0.0.1:8474", "base URL of Toxiproxy's API")
	token := fs.String("token", st.Getenv("CHAOSRUN_TOKEN"), "the Toxiproxy API's token (env CHAOSRUN_TOKEN)")
	delay := fs.Duration("delay", 0, "time from Toxiproxy being ready to the schedule's zero (the faults' start offsets count from there)")
	wait := fs.Duration("wait", 5*time.Minute, "how long to wait for Toxiproxy and the scenario's proxies")
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: chaosrun fault apply [--toxiproxy URL] [--token T] [--delay D] [--wait D] SCENARIO.yaml")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	if *delay < 0 || *wait <= 0 {
		fmt.Fprintf(st.Stderr, "chaosrun fault apply: --delay %s, --wait %s: want --delay >= 0 and --wait > 0\n", *delay, *wait)
		return exitUsage
	}
	sc, err := loadScenario(fs.Arg(0), nil)
	if err != nil {
		fmt.Fprintln(st.Stderr, err)
		return exitUsage
	}
	for _, f := range sc.Faults {
		if faults.IsHostKind(f.Kind) {
			fmt.Fprintf(st.Stderr, "chaosrun fault apply: fault %s is a %s: host faults act on containers, not through Toxiproxy (run them with `chaosrun run --testbed docker`)\n", f.Name, f.Kind)
			return exitUsage
		}
	}
	u, err := url.Parse(*api)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(st.Stderr, "chaosrun fault apply: --toxiproxy %q is not an http(s) URL\n", *api)
		return exitUsage
	}
	if *token != "" {
		u.User = url.UserPassword("", *token)
	}
	if len(sc.Faults) == 0 {
		fmt.Fprintf(st.Stdout, "%s has no faults: nothing to apply\n", sc.Name)
		return exitOK
	}
	var proxies []string
	for _, e := range sc.Edges() {
		proxies = append(proxies, e.Proxy)
	}
	wctx, cancel := context.WithTimeoutCause(ctx, *wait, fmt.Errorf("not ready within --wait %s", *wait))
	err = faults.WaitForProxies(wctx, u.String(), proxies, 500*time.Millisecond)
	cancel()
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun fault apply: %s: %v\n", u.Redacted(), err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitRunError
	}
	start := time.Now().Add(*delay)
	fmt.Fprintf(st.Stdout, "toxiproxy at %s has the %d proxies of %s; the schedule's zero is %s\n", u.Redacted(), len(proxies), sc.Name, start.UTC().Format(time.RFC3339))
	failed := 0
	env := &faults.ScenarioEnv{Scenario: sc, API: faults.NewToxiproxyAPI(u.String())}
	err = faults.Run(ctx, clock.Real{}, start, sc.Faults, env, func(ev record.FaultEvent) {
		if ev.Action == record.Failed {
			failed++
		}
		fmt.Fprintln(st.Stdout, faultLine(ev, start))
	})
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(st.Stderr, "chaosrun fault apply: stopped; the faults in force were reverted")
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(st.Stderr, "chaosrun fault apply: %v\n", err)
		return exitRunError
	case failed > 0:
		fmt.Fprintf(st.Stderr, "chaosrun fault apply: %d fault action(s) failed\n", failed)
		return exitRunError
	}
	return exitOK
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
