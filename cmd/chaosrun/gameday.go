package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chaosrun/chaosrun/gameday"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// cmdGameday runs a game day: steady load, a page to inject faults by hand
// and watch the SLOs live, stop conditions, and the run's report at the end.
func cmdGameday(ctx context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("gameday", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	var sets, guards, allow stringList
	fs.Var(&sets, "set", "override a scenario value, e.g. bank.bulkheads=off (repeatable)")
	fs.Var(&guards, "guard", "assertion of the scenario that is a stop condition: when it breaches for longer than --grace, every fault is reverted (repeatable)")
	fs.Var(&allow, "allow-target", "let load reach this host or host:port besides loopback and the testbed's services (repeatable)")
	grace := fs.Duration("grace", 5*time.Second, "how long a guard may breach before every fault is reverted")
	slide := fs.Duration("window", 10*time.Second, "sliding window of the live SLOs")
	listen := fs.String("listen", "127.0.0.1:0", "address of the game day's page and API (other than loopback needs --token)")
	token := fs.String("token", "", "token the page and API require (default: none on loopback; env CHAOSRUN_GAMEDAY_TOKEN)")
	maxDur := fs.Duration("max-duration", time.Hour, "stop the load after this long at the latest")
	bed := fs.String("testbed", "local", "where services run: local (child processes) or docker (containers)")
	k6path := fs.String("k6", "", "use this k6 binary (built with xk6-resilience) instead of building one")
	outDir := fs.String("out-dir", "chaosrun-results", "folder for the record, report and logs (sub-folder SCENARIO-gameday)")
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: chaosrun gameday [flags] SCENARIO.yaml")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	if *token == "" {
		*token = st.Getenv("CHAOSRUN_GAMEDAY_TOKEN")
	}
	if *bed != "local" && *bed != "docker" {
		fmt.Fprintf(st.Stderr, "chaosrun gameday: --testbed %q is not available (allowed: local, docker)\n", *bed)
		return exitUsage
	}
	if *grace <= 0 || *slide < 2*time.Second || *maxDur <= 0 {
		fmt.Fprintln(st.Stderr, "chaosrun gameday: --grace and --max-duration must be positive and --window at least 2s")
		return exitUsage
	}
	if err := gameday.CheckListen(*listen, *token); err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun gameday: %v\n", err)
		return exitUsage
	}
	sc, err := loadScenario(fs.Arg(0), sets)
	if err != nil {
		fmt.Fprintln(st.Stderr, err)
		return exitUsage
	}
	if err := gameday.CheckGuards(sc, guards); err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun gameday: %v\n", err)
		return exitUsage
	}
	allowed, err := blastRadius(sc, allow)
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun gameday: %s: %v\n", fs.Arg(0), err)
		return exitUsage
	}

	root, err := k6build.FindRoot("")
	if err != nil && *k6path == "" {
		fmt.Fprintf(st.Stderr, "chaosrun gameday: %v\n", err)
		return exitRunError
	}
	bin, err := k6build.Ensure(ctx, k6build.Options{K6Path: *k6path, Root: root, Progress: st.Stderr})
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun gameday: k6: %v\n", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitRunError
	}
	rs := runSettings{bed: *bed, k6: bin.Path, root: root}
	if *bed == "docker" {
		if rs.image, err = dockerImage(ctx, st, root); err != nil {
			fmt.Fprintf(st.Stderr, "chaosrun gameday: %v\n", err)
			return exitRunError
		}
	}
	dir := filepath.Join(*outDir, sc.Name+"-gameday")
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun gameday: out dir: %v\n", err)
		return exitRunError
	}
	script := sc.Workload.Script
	if !filepath.IsAbs(script) {
		script = filepath.Join(filepath.Dir(sc.File), script)
		if _, serr := os.Stat(script); serr != nil {
			script = filepath.Join(root, "workloads", sc.Workload.Script)
		}
	}
	fmt.Fprintf(st.Stderr, "▶ game day %s: testbed %s, load until stopped (at most %s)\n", sc.Name, *bed, *maxDur)
	rec, rerr := gameday.Run(ctx, gameday.Options{
		Scenario: sc, Testbed: newTestbed(st, rs, sc, filepath.Join(dir, "logs")),
		K6: bin.Path, Script: script, OutDir: dir,
		Listen: *listen, Token: *token, Guards: guards, Grace: *grace, Slide: *slide, MaxDuration: *maxDur,
		Allowed: allowed, Log: st.Stderr,
		Versions: map[string]string{"chaosrun": version(), "k6": bin.Version}, Overrides: sets,
		Ready: func(url string) {
			fmt.Fprintf(st.Stdout, "game day page: %s\n", url)
			fmt.Fprintln(st.Stderr, "press Ctrl-C or the page's Stop button to end the game day")
		},
	})
	if rec == nil {
		fmt.Fprintf(st.Stderr, "chaosrun gameday: %v\n", rerr)
		return exitUsage
	}
	defer rec.Close()
	code := exitOK
	for _, w := range []struct {
		name  string
		write func(string) error
	}{
		{"run.json", func(p string) error { return record.WriteJSON(p, rec) }},
		{"summary.md", func(p string) error { return report.WriteMarkdown(p, rec) }},
		{"report.html", func(p string) error { return report.WriteHTML(p, rec) }},
	} {
		if werr := w.write(filepath.Join(dir, w.name)); werr != nil {
			fmt.Fprintf(st.Stderr, "chaosrun gameday: %v\n", werr)
			code = exitRunError
		}
	}
	report.Table(st.Stdout, rec)
	fmt.Fprintf(st.Stderr, "game day record: %s (report: %s)\n", filepath.Join(dir, "run.json"), filepath.Join(dir, "report.html"))
	switch {
	case rerr != nil && (errors.Is(rerr, gameday.ErrInterrupted) || ctx.Err() != nil):
		// Ctrl-C is the ordinary way to end a game day.
		fmt.Fprintln(st.Stderr, "chaosrun gameday: ended by interrupt")
		return exitInterrupted
	case rerr != nil:
		fmt.Fprintf(st.Stderr, "chaosrun gameday: %v\n", rerr)
		return exitRunError
	}
	return code
}
