package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/judge"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// judgeFlags are judge's flags.
type judgeFlags struct {
	sets                             []string
	faults, outDir                   string
	partial, quiet                   bool
	listen, events, token, cert, key string
	shards                           int
	wait, margin                     time.Duration
}

func newJudgeCmd(st *State) *cobra.Command {
	var f judgeFlags
	cmd := &cobra.Command{
		Use:   "judge [flags] SCENARIO.yaml (RESULTS.jsonl… | --listen HOST:PORT --shards N)",
		Short: "judge a scenario over results files, or over N load shards' streams received from anywhere",
		Long: `Give a scenario's verdicts, record and reports without a testbed.
Files: over results files (k6 --out resilience=FILE, chaosrun load --results
FILE, a run's logs/results*.jsonl), one per shard, merged exactly; --faults
adds the fault timeline (a run record, which also gives load's start and end,
/metrics and end checks; or chaosrun fault apply --events-out's file).
Receive: listen for N shards' streams (chaosrun load --shard I/N, k6 --out
resilience=tcp://…) and for fault apply --report-to's events on the next
port, wait for every shard's end, and judge the merged stream; a shard that
never connects or dies fails the verdict by name.
Exit codes: 0 every check holds, 1 a breach, 2 bad usage, scenario or input
(a results file cut short or malformed), 3 incomplete (a shard missing or
dead, no load), 130 interrupted.`,
		Example: `  chaosrun judge scenarios/bank-slow-vault.yaml results.jsonl --faults run.json
  chaosrun judge --listen 0.0.0.0:7000 --shards 4 --token "$TOKEN" scenarios/bank-slow-vault.yaml`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: scenarioArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runJudge(cmd.Context(), st, &f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.sets, "set", nil, "override a scenario value, e.g. workload.duration=30s (repeatable)")
	fl.StringVar(&f.faults, "faults", "", "the fault timeline: a run record (run.json) or fault apply's --events-out file (files only)")
	fl.BoolVar(&f.partial, "partial", false, "judge what results files cut short or with malformed lines hold; the record is marked incomplete")
	fl.StringVar(&f.outDir, "out-dir", "chaosrun-results", "folder for the record and reports (one sub-folder per scenario)")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines while waiting")
	fl.StringVar(&f.listen, "listen", "", "receive the shards' results streams on HOST:PORT")
	fl.StringVar(&f.events, "events-listen", "", "receive fault apply's events on HOST:PORT (default: --listen's host, the next port)")
	fl.IntVar(&f.shards, "shards", 1, "how many load shards stream to --listen")
	fl.StringVar(&f.token, "token", st.Getenv("CHAOSRUN_RESULTS_TOKEN"), "the token of every stream's hello and event request (default: one made and printed; env CHAOSRUN_RESULTS_TOKEN)")
	fl.StringVar(&f.cert, "tls-cert", "", "PEM certificate: streams and events speak TLS (with --tls-key)")
	fl.StringVar(&f.key, "tls-key", "", "PEM private key of --tls-cert")
	fl.DurationVar(&f.wait, "wait", 10*time.Minute, "how long to wait for the first shard's hello")
	fl.DurationVar(&f.margin, "margin", judge.DefaultMargin, "how long past load's planned duration the shards have to end")
	return cmd
}

func runJudge(ctx context.Context, st *State, f *judgeFlags, args []string) error {
	sc, err := loadScenario(ctx, st, args[0], f.sets)
	if err != nil {
		return scenarioFailed(ctx, st, err)
	}
	versions := map[string]string{"chaosrun": version(), "engine": sc.Workload.EngineName()}
	var rec *record.Run
	switch {
	case f.listen != "" && len(args) > 1:
		return failf(exitUsage, "give results files or --listen, not both")
	case f.listen != "":
		o, err := f.receiveOptions(st)
		if err != nil {
			return fail(exitUsage, err)
		}
		o.Versions, o.SpillDir = versions, ""
		rec, err = judge.Receive(ctx, sc, o)
		if err != nil {
			return fail(exitRunError, err)
		}
	default:
		if rec, err = f.fromFiles(st, sc, args[1:], versions); err != nil {
			return err
		}
	}
	defer rec.Close()
	return judgeOutcome(ctx, st, f, sc, rec)
}

// fromFiles judges sc over results files.
func (f *judgeFlags) fromFiles(st *State, sc *scenario.Scenario, files []string, versions map[string]string) (*record.Run, error) {
	if len(files) == 0 {
		return nil, failf(exitUsage, "no results file: give RESULTS.jsonl… or --listen HOST:PORT")
	}
	if f.shards != 1 || f.events != "" || f.cert != "" {
		return nil, failf(exitUsage, "--shards, --events-listen and --tls-* go with --listen")
	}
	o := judge.FileOptions{Partial: f.partial, Versions: versions}
	for _, p := range files {
		o.Files = append(o.Files, st.path(p))
	}
	if f.faults != "" {
		b, err := st.readFile(f.faults)
		if err != nil {
			return nil, fail(exitUsage, err)
		}
		tl, err := judge.ReadTimeline(f.faults, b)
		if err != nil {
			return nil, fail(exitUsage, err)
		}
		o.Timeline = &tl
	}
	rec, err := judge.FromFiles(sc, o)
	if ie := (*judge.InputError)(nil); errors.As(err, &ie) {
		return nil, fail(exitUsage, err)
	}
	if err != nil {
		return nil, fail(exitRunError, err)
	}
	return rec, nil
}

// receiveOptions checks the receive flags.
func (f *judgeFlags) receiveOptions(st *State) (judge.ReceiveOptions, error) {
	o := judge.ReceiveOptions{Listen: f.listen, EventsListen: f.events, Token: f.token, Shards: f.shards, Wait: f.wait, Margin: f.margin}
	switch {
	case f.faults != "" || f.partial:
		return o, errors.New("--faults and --partial go with results files; a receiving judge takes fault apply's events")
	case f.shards < 1 || f.shards > 1000:
		return o, fmt.Errorf("--shards %d: want 1 to 1000", f.shards)
	case (f.cert == "") != (f.key == ""):
		return o, errors.New("--tls-cert and --tls-key go together")
	}
	for flag, addr := range map[string]string{"--listen": f.listen, "--events-listen": f.events} {
		if _, _, err := net.SplitHostPort(addr); addr != "" && err != nil {
			return o, fmt.Errorf("%s %q is not HOST:PORT", flag, addr)
		}
	}
	if f.cert != "" {
		cfg, err := stream.ServerTLS(st.path(f.cert), st.path(f.key))
		if err != nil {
			return o, err
		}
		o.TLS = cfg
	}
	if o.Token == "" {
		o.Token = stream.NewToken()
		fmt.Fprintf(st.Stderr, "judge: token %s (generated; shards send it: chaosrun load as CHAOSRUN_RESULTS_TOKEN, k6 as K6_RESILIENCE_TOKEN; fault apply as --report-token)\n", o.Token)
	}
	if !f.quiet {
		o.Progress = st.Stderr
	}
	o.OnListen = func(what, addr string) { fmt.Fprintf(st.Stderr, "judge: %s on %s\n", what, addr) }
	o.OnRefused = func(err error) { fmt.Fprintf(st.Stderr, "chaosrun judge: %v\n", err) }
	return o, nil
}

// judgeOutcome writes the record and reports and says the verdict, with
// run's exit codes.
func judgeOutcome(ctx context.Context, st *State, f *judgeFlags, sc *scenario.Scenario, rec *record.Run) error {
	dir := filepath.Join(st.path(f.outDir), sc.Name)
	werr := report.WriteAll(dir, rec)
	report.Table(st.Stdout, rec)
	printLines(st, "chaosrun judge", werr)
	fmt.Fprintf(st.Stderr, "run record: %s\n", filepath.Join(dir, "run.json"))
	var failed []string
	for _, v := range rec.Verdicts {
		if !v.Pass {
			failed = append(failed, v.Assertion)
		}
	}
	switch {
	case ctx.Err() != nil:
		return failf(exitInterrupted, "%s interrupted; the record is marked incomplete", sc.Name)
	case werr != nil:
		return exit(exitRunError)
	case rec.Incomplete:
		return failf(exitRunError, "%s incomplete: %s", sc.Name, strings.Join(rec.Problems, "; "))
	case !report.Passed(rec):
		return failf(exitBreach, "%s breached: %s", sc.Name, strings.Join(failed, ", "))
	}
	return nil
}

// reportFlags are fault apply's flags for where its events go.
type reportFlags struct {
	to, token, ca, eventsOut string
}

func (f *reportFlags) register(cmd *cobra.Command, st *State) {
	fl := cmd.Flags()
	fl.StringVar(&f.to, "report-to", "", "a judge's events endpoint, http(s)://HOST:PORT: the schedule's zero is load's start there (plus --delay), and each event is sent to it")
	fl.StringVar(&f.token, "report-token", st.Getenv("CHAOSRUN_RESULTS_TOKEN"), "the judge's token (env CHAOSRUN_RESULTS_TOKEN)")
	fl.StringVar(&f.ca, "report-ca", "", "PEM CA to trust for an https --report-to")
	fl.StringVar(&f.eventsOut, "events-out", "", "write each event to this file, one JSON object a line (chaosrun judge --faults reads it)")
}

// open makes the event report and the schedule's zero; close closes the
// events file.
func (f *reportFlags) open(st *State, delay, wait time.Duration) (*judge.EventReport, func(context.Context) (time.Time, error), func(), error) {
	rep := &judge.EventReport{}
	zero := func(context.Context) (time.Time, error) { return time.Now().Add(delay), nil }
	closeFn := func() {}
	if f.to != "" {
		if f.token == "" {
			return nil, nil, nil, errors.New("--report-to needs the judge's token (--report-token or CHAOSRUN_RESULTS_TOKEN)")
		}
		client := &http.Client{Timeout: 10 * time.Second}
		if f.ca != "" {
			pem, err := st.readFile(f.ca)
			pool := x509.NewCertPool()
			if err != nil || !pool.AppendCertsFromPEM(pem) {
				return nil, nil, nil, fmt.Errorf("--report-ca %s: no PEM certificate (%v)", f.ca, err)
			}
			client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
		}
		rep.Reporter = &judge.Reporter{URL: f.to, Token: f.token, Client: client}
		zero = func(ctx context.Context) (time.Time, error) {
			fmt.Fprintf(st.Stderr, "fault apply: waiting for load to start at the judge %s\n", f.to)
			t, err := rep.Reporter.Start(ctx, wait)
			return t.Add(delay), err
		}
	}
	if f.eventsOut != "" {
		file, err := os.Create(st.path(f.eventsOut))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--events-out: %w", err)
		}
		rep.File, closeFn = file, func() { file.Close() }
	}
	return rep, zero, closeFn, nil
}
