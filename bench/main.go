// Command bench measures chaosrun against the alternatives on this machine,
// in one run, and writes bench/results.json:
//
//	go run ./bench                      # everything, about 40 minutes on 2 cores
//	go run ./bench -only loadgen,ingest # some sections
//	go run ./bench -render bench/results.json -markdown   # print a saved run
//
// Every figure is a ratio against a reference measured in the same run: the
// machines are shared and noisy, so absolute numbers are shown, not judged.
// It needs wrk (`scripts/install-deps.sh --bench`); k6 with xk6-resilience,
// vegeta, benchstat and chaosrun are built from this repository. All traffic
// stays on 127.0.0.1 and every process it starts is stopped by PID.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chaosrun/chaosrun/workloads/k6build"
)

// sectionNames are the bench's sections, in the order they run.
var sectionNames = []string{"loadgen", "grpc", "ingest", "judge", "accuracy", "faults", "targets", "micro", "verdict", "firstrun"}

// config is the bench's flags.
type config struct {
	only        []string
	arms        string
	step        time.Duration
	searchSteps int
	benchtime   string
	count       int
	catalog     string
	dockCatalog string
	docker      bool
	plainK6     string
	out         string
	budget      time.Duration
	quick       bool
	machine     string
}

// bench is one run: its tools, scratch folder and shared target server.
type bench struct {
	cfg       config
	root, tmp string
	cache     string
	self      string
	stderr    io.Writer
	start     time.Time

	k6, k6Version      string
	plainK6, plainNote string
	wrk, vegeta, bstat string
	chaosrun           string
	chaosrunBuild      time.Duration
	server             *proc
	notes              []string
	tools              map[string]string
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	only := fs.String("only", "", "comma-separated sections to run (default all: "+strings.Join(sectionNames, ",")+")")
	fs.StringVar(&cfg.arms, "arms", "", "load generation: comma-separated arms to search (a,b,c,d plain k6, k6 with the output, k6 with JSON, vegeta; f,g native bare and smart); default all, for trying one engine")
	fs.DurationVar(&cfg.step, "step", 4*time.Second, "load duration of each rate-search step")
	fs.IntVar(&cfg.searchSteps, "search-steps", 9, "most steps of each rate search")
	fs.StringVar(&cfg.benchtime, "benchtime", "200ms", "-benchtime of the Go micro-benchmarks")
	fs.IntVar(&cfg.count, "count", 6, "-count of the Go micro-benchmarks (benchstat needs 6 for a 95% confidence interval)")
	fs.StringVar(&cfg.catalog, "catalog", "all", "time to verdict on the local testbed over: all (scenarios/, ~11 minutes) or subset (two scenarios, ~1½ minutes)")
	fs.BoolVar(&cfg.docker, "docker", false, "also time the verdict on the Docker testbed, with its fault precision")
	fs.StringVar(&cfg.dockCatalog, "docker-catalog", "subset", "with -docker, time to verdict over: subset (two scenarios, ~2½ minutes; the full catalog is estimated from them) or all (~15 minutes more)")
	fs.StringVar(&cfg.plainK6, "plain-k6", "build", "k6 for the plain arms: build (xk6 without extensions, cached; quick once the extension build is), auto (that build if cached, else the extension build), ext (the extension build) or a path")
	fs.StringVar(&cfg.out, "o", "", "where to write the results, relative to the repository root (default bench/results.json for a full run, bench/results-partial.json with -only or -quick)")
	fs.DurationVar(&cfg.budget, "budget", 60*time.Minute, "hard wall-clock limit of the whole run")
	fs.BoolVar(&cfg.quick, "quick", false, "short everything (2 s steps, 3 search steps, 1 benchmark count, one short scenario): for trying the bench, not for figures")
	fs.StringVar(&cfg.machine, "machine", "", "machine description for the results (default: cores, memory and OS found here)")
	render := fs.String("render", "", "print a saved results.json instead of running")
	markdown := fs.Bool("markdown", false, "with -render: print the Markdown table of docs/figures.md")
	merge := fs.String("merge", "", "put the sections of a saved partial run (e.g. bench/results-partial.json) into -o (default bench/results.json) in place of theirs, noting where they came from")
	serve := fs.Bool("serve", false, "internal: run the bench's HTTP server")
	ingestChild := fs.Int("ingest-child", 0, "internal: ingest N synthetic windows and print the cost as JSON")
	ingestRate := fs.Int("ingest-rate", 4000, "internal: requests per second the synthetic windows hold")
	judgeChild := fs.Int("judge-child", 0, "internal: judge N seconds of simulated shard streams and print the cost as JSON")
	judgeSend := fs.String("judge-send", "", "internal: send simulated shard streams to this judge address")
	judgeSecs := fs.Int("judge-secs", 0, "internal: with -judge-send, seconds of windows")
	fs.IntVar(&judgeShards, "judge-shards", judgeShards, "internal: shard streams the judge section simulates")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case *serve:
		return serveHTTP(ctx, stdout)
	case *ingestChild > 0:
		return ingestChildMain(ctx, *ingestChild, *ingestRate, stdout)
	case *merge != "":
		into := cfg.out
		if into == "" {
			into = "bench/results.json"
		}
		return mergeResults(into, *merge, stdout)
	case *judgeChild > 0:
		self, err := os.Executable()
		if err != nil {
			return err
		}
		return judgeChildMain(ctx, self, *judgeChild, stdout)
	case *judgeSend != "":
		return judgeSendMain(ctx, *judgeSend, *judgeSecs)
	case *render != "":
		res, err := Load(*render)
		if err != nil {
			return err
		}
		if *markdown {
			return res.WriteMarkdown(stdout)
		}
		return res.WriteText(stdout)
	}
	if *only != "" {
		for s := range strings.SplitSeq(*only, ",") {
			if !slices.Contains(sectionNames, s) {
				return fmt.Errorf("-only: unknown section %q (allowed: %s)", s, strings.Join(sectionNames, ", "))
			}
			cfg.only = append(cfg.only, s)
		}
	} else {
		cfg.only = sectionNames
	}
	for flag, v := range map[string]string{"-catalog": cfg.catalog, "-docker-catalog": cfg.dockCatalog} {
		if v != "subset" && v != "all" {
			return fmt.Errorf("%s %q: allowed subset or all", flag, v)
		}
	}
	if cfg.quick {
		cfg.step, cfg.searchSteps, cfg.count, cfg.benchtime = 2*time.Second, 3, 1, "50ms"
	}
	if cfg.out == "" {
		cfg.out = "bench/results.json"
		if cfg.quick || *only != "" {
			cfg.out = "bench/results-partial.json"
		}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.budget)
	defer cancel()
	b := &bench{cfg: cfg, stderr: stderr, start: time.Now(), tools: map[string]string{}}
	res, err := b.runAll(ctx)
	if res == nil {
		return err
	}
	res.Finish()
	fmt.Fprintln(stdout)
	if werr := res.WriteText(stdout); werr != nil {
		return werr
	}
	out := cfg.out
	if !filepath.IsAbs(out) {
		out = filepath.Join(b.root, out)
	}
	if serr := res.Save(out); serr != nil {
		return errors.Join(err, serr)
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return err
}

// runAll prepares the tools and runs the chosen sections; a section that
// fails keeps its error in the results and the others still run.
func (b *bench) runAll(ctx context.Context) (*Results, error) {
	if err := b.setup(ctx); err != nil {
		b.cleanup()
		return nil, err
	}
	defer b.cleanup()
	res := &Results{Version: ResultsVersion, Date: b.start.UTC().Format("2006-01-02"), Machine: b.machine(),
		Command: strings.TrimSpace("go run ./bench " + strings.Join(os.Args[1:], " "))}
	sections := map[string]func(context.Context) (Section, error){
		"loadgen": b.loadgenSection, "ingest": b.ingestSection, "judge": b.judgeSection, "accuracy": b.accuracySection,
		"faults": b.faultsSection, "targets": b.targetsSection, "micro": b.microSection, "verdict": b.verdictSection,
		"firstrun": b.firstRunSection, "grpc": b.grpcSection,
	}
	for _, name := range b.cfg.only {
		if ctx.Err() != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: not run: %v", name, ctx.Err()))
			continue
		}
		b.logf("== %s", name)
		t0 := time.Now()
		sec, err := sections[name](ctx)
		sec.Secs = secs(time.Since(t0))
		if err != nil {
			sec.Error = err.Error()
			b.logf("  %s failed: %v", name, err)
		}
		res.Sections = append(res.Sections, sec)
	}
	res.Machine.Tools = b.tools
	res.Wall = time.Since(b.start).Round(time.Second).String()
	res.Notes = append(res.Notes, b.notes...)
	return res, ctx.Err()
}

// setup finds the repository, builds or finds every tool the chosen
// sections need and starts the bench's HTTP server.
func (b *bench) setup(ctx context.Context) error {
	var err error
	if b.root, err = k6build.FindRoot("."); err != nil {
		return err
	}
	if b.self, err = os.Executable(); err != nil {
		return err
	}
	if b.tmp, err = os.MkdirTemp("", "chaosrun-bench-"); err != nil {
		return err
	}
	b.cache = os.Getenv("CHAOSRUN_CACHE")
	if b.cache == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no cache folder: set CHAOSRUN_CACHE: %w", err)
		}
		b.cache = filepath.Join(uc, "chaosrun")
	}
	need := func(names ...string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(b.cfg.only, n) })
	}
	if need("loadgen", "accuracy", "targets") {
		if b.wrk, err = lookWrk(); err != nil {
			return err
		}
		if r, _ := runCmd(ctx, 10*time.Second, "", nil, b.wrk, "-v"); len(r.Out) > 0 {
			first, _, _ := strings.Cut(string(r.Out), " [")
			b.tools["wrk"] = strings.TrimSpace(first)
		}
	}
	if need("loadgen", "grpc", "accuracy", "verdict") {
		b.logf("k6 with xk6-resilience (cached after the first build)")
		bin, err := k6build.Ensure(ctx, k6build.Options{Root: b.root, Progress: b.stderr, Getenv: os.Getenv})
		if err != nil {
			return fmt.Errorf("k6 with xk6-resilience: %w", err)
		}
		b.k6, b.k6Version, b.tools["k6"] = bin.Path, bin.Version, bin.Version
		if err := b.findPlainK6(ctx); err != nil {
			return err
		}
	}
	if need("loadgen", "micro") {
		b.logf("vegeta and benchstat from tools/vegeta")
		mod := filepath.Join(b.root, "tools", "vegeta")
		b.vegeta, b.bstat = filepath.Join(b.tmp, "vegeta"), filepath.Join(b.tmp, "benchstat")
		if err := goBuild(ctx, mod, b.vegeta, "github.com/tsenart/vegeta/v12"); err != nil {
			return err
		}
		if err := goBuild(ctx, mod, b.bstat, "golang.org/x/perf/cmd/benchstat"); err != nil {
			return err
		}
		b.tools["vegeta"] = modVersion(filepath.Join(mod, "go.mod"), "github.com/tsenart/vegeta/v12")
		b.tools["benchstat"] = modVersion(filepath.Join(mod, "go.mod"), "golang.org/x/perf")
	}
	if need("loadgen", "grpc", "accuracy", "faults", "targets", "verdict") {
		b.logf("chaosrun binary")
		b.chaosrun = filepath.Join(b.tmp, "chaosrun")
		t0 := time.Now()
		if err := goBuild(ctx, b.root, b.chaosrun, "./cmd/chaosrun"); err != nil {
			return err
		}
		b.chaosrunBuild = time.Since(t0)
	}
	if need("loadgen", "accuracy", "faults", "targets") {
		if b.server, err = startServer(ctx, "bench server", b.self, "-serve"); err != nil {
			return err
		}
	}
	return nil
}

// findPlainK6 picks the k6 of the plain arms (see -plain-k6).
func (b *bench) findPlainK6(ctx context.Context) error {
	cached := filepath.Join(b.cache, "k6-"+k6build.K6Version+"-plain")
	useExt := func() {
		b.plainK6 = b.k6
		b.plainNote = "extension build; not imported, no --out"
		b.notes = append(b.notes, "plain k6 arms ran on the xk6-resilience build: the extension registers but is neither imported nor used as an output (-plain-k6 build makes a plain k6)")
	}
	switch mode := b.cfg.plainK6; mode {
	case "ext":
		useExt()
	case "auto":
		if isExec(cached) {
			b.plainK6 = cached
		} else {
			useExt()
		}
	case "build":
		if !isExec(cached) {
			if err := buildPlainK6(ctx, b.root, b.cache, cached, b.stderr); err != nil {
				return err
			}
		}
		b.plainK6 = cached
	default:
		if !isExec(mode) {
			return fmt.Errorf("-plain-k6 %s: not an executable file", mode)
		}
		b.plainK6 = mode
	}
	if b.plainK6 != b.k6 {
		r, err := runCmd(ctx, 30*time.Second, "", nil, b.plainK6, "version")
		if err != nil || r.Code != 0 {
			return fmt.Errorf("plain k6 %s: `k6 version` failed: %v %s", b.plainK6, err, r.Out)
		}
		first, _, _ := strings.Cut(strings.TrimSpace(string(r.Out)), "\n")
		b.tools["k6 (plain)"] = first
		b.plainNote = "plain k6 build"
	}
	return nil
}

// buildPlainK6 builds k6 with xk6 and no extension into target, building
// xk6 from tools/xk6 first if the cache lacks it.
func buildPlainK6(ctx context.Context, root, cache, target string, progress io.Writer) error {
	xk6 := filepath.Join(cache, "xk6-"+k6build.XK6Version)
	if !isExec(xk6) {
		if err := goBuild(ctx, filepath.Join(root, k6build.XK6ToolsDir), xk6, "go.k6.io/xk6/cmd/xk6"); err != nil {
			return err
		}
	}
	fmt.Fprintf(progress, "building plain k6 %s with xk6 (a cold build takes a few minutes)\n", k6build.K6Version)
	dir, err := os.MkdirTemp("", "k6-plain-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tmp := target + ".tmp-" + strconv.Itoa(os.Getpid())
	defer os.Remove(tmp)
	res, err := runCmd(ctx, 20*time.Minute, dir, []string{"GOWORK=off"}, xk6, "build", k6build.K6Version, "--output", tmp)
	if err != nil {
		return err
	}
	if res.Code != 0 {
		return fmt.Errorf("xk6 build %s failed:\n%s", k6build.K6Version, lastLines(string(res.Out), 20))
	}
	return os.Rename(tmp, target)
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// modVersion reads the version a go.mod requires of mod.
func modVersion(gomod, mod string) string {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == mod {
			return mod + " " + f[1]
		}
	}
	return ""
}

// machine describes this machine: cores, memory, OS (no names, no paths).
func (b *bench) machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	m.Description = b.cfg.machine
	if m.Description == "" {
		mem := ""
		if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
			var kb int64
			if _, err := fmt.Sscanf(string(raw), "MemTotal: %d kB", &kb); err == nil {
				mem = fmt.Sprintf(", %d GiB", (kb+(1<<19))>>20)
			}
		}
		m.Description = fmt.Sprintf("%d shared cores%s, %s", m.CPUs, mem, map[string]string{"linux": "Linux"}[runtime.GOOS])
	}
	return m
}

// cleanup stops the shared server and removes the scratch folder.
func (b *bench) cleanup() {
	if b.server != nil {
		b.server.Stop()
	}
	if b.tmp != "" {
		_ = os.RemoveAll(b.tmp)
	}
}

// logf prints progress to stderr with the time since the start.
func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.stderr, "[%5.0fs] %s\n", time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
}
