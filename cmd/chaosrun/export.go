package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/chaosrun/chaosrun/export/k8s"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/k6build"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// cmdExport writes a scenario for another platform; k8s is the one there is.
func cmdExport(ctx context.Context, st *State, args []string) int {
	if len(args) > 0 && args[0] == "k8s" {
		return cmdExportK8s(ctx, st, args[1:])
	}
	fmt.Fprintln(st.Stderr, "usage: chaosrun export k8s SCENARIO.yaml [flags]   (Kubernetes manifests; `chaosrun export k8s -h` lists the flags)")
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		return exitOK
	}
	return exitUsage
}

func cmdExportK8s(_ context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("export k8s", flag.ContinueOnError)
	fs.SetOutput(st.Stderr)
	out := fs.String("out", "", "write DIR/SCENARIO.yaml instead of printing the manifests")
	parallelism := fs.Int("parallelism", 1, fmt.Sprintf("k6 runners of the TestRun (1 to %d); each runs its execution segment", k8s.MaxParallelism))
	image := fs.String("image", "chaosrun:latest", "the chaosrun image you pushed (entrypoint: the chaosrun binary); serves the targets and Toxiproxy, runs the fault Job")
	k6Image := fs.String("k6-image", "chaosrun-k6:latest", "a k6 image built with xk6-resilience, for the TestRun's runners")
	namespace := fs.String("namespace", "", "namespace of every object (default chaosrun-SCENARIO)")
	resultsAddr := fs.String("results-addr", "", "HOST:PORT where the harness receives the results stream (chaosrun run --results-listen); empty: results go nowhere")
	resultsToken := fs.String("results-token", st.Getenv("CHAOSRUN_RESULTS_TOKEN"), "the receiver's token (default: generated and printed; env CHAOSRUN_RESULTS_TOKEN)")
	resultsTLS := fs.Bool("results-tls", false, "runners connect to the receiver with TLS (system roots)")
	resultsCA := fs.String("results-ca", "", "PEM file of the CA the runners trust for the receiver; implies --results-tls")
	delay := fs.Duration("fault-delay", 30*time.Second, "time from Toxiproxy being ready to the fault schedule's zero (the k6 runners start when the operator has them all ready)")
	fs.Usage = func() {
		fmt.Fprintln(st.Stderr, "usage: chaosrun export k8s SCENARIO.yaml [--out DIR] [--parallelism N] [--image IMG] [--k6-image IMG] [--results-addr HOST:PORT] [flags]")
		fs.PrintDefaults()
	}
	// Flags may come after the scenario too.
	var files []string
	for {
		if code, ok := parseFlags(fs, args); !ok {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) != 1 {
		fs.Usage()
		return exitUsage
	}
	sc, err := loadScenario(files[0], nil)
	if err != nil {
		fmt.Fprintln(st.Stderr, err)
		return exitUsage
	}
	o := k8s.Options{Namespace: *namespace, Image: *image, K6Image: *k6Image, Parallelism: *parallelism,
		ResultsAddr: *resultsAddr, ResultsToken: *resultsToken, ResultsTLS: *resultsTLS,
		ToxiproxyToken: stream.NewToken(), Seed: rand.Int64N(1<<31) + 1, FaultDelay: *delay}
	generated := o.ResultsAddr != "" && o.ResultsToken == ""
	if generated {
		o.ResultsToken = stream.NewToken()
	}
	var errs []error
	if o.ScenarioFile, err = os.ReadFile(files[0]); err != nil {
		errs = append(errs, err)
	}
	if o.Script, err = readScript(files[0], sc.Workload.Script); err != nil {
		errs = append(errs, err)
	}
	if *resultsCA != "" {
		if o.ResultsCA, err = os.ReadFile(*resultsCA); err != nil {
			errs = append(errs, fmt.Errorf("--results-ca: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun export k8s: %v\n", err)
		return exitUsage
	}
	m, err := k8s.Build(sc, o)
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun export k8s: %v\n", err)
		return exitUsage
	}
	header := fmt.Sprintf("chaosrun export k8s: scenario %s (%s).\nkubectl apply -f this file; the TestRun needs the k6-operator. The Secret holds tokens.", sc.Name, filepath.Base(files[0]))
	doc, err := m.YAML(header)
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun export k8s: %v\n", err)
		return exitRunError
	}
	if generated {
		fmt.Fprintf(st.Stderr, "results stream token: %s (generated; give it to the receiving harness: chaosrun run --results-listen HOST:PORT --results-token …)\n", o.ResultsToken)
	}
	if o.ResultsAddr == "" {
		fmt.Fprintln(st.Stderr, "chaosrun export k8s: no --results-addr: the k6 runners send their results nowhere")
	}
	if *out == "" {
		st.Stdout.Write(doc)
		return exitOK
	}
	path := filepath.Join(*out, sc.Name+".yaml")
	if err := os.MkdirAll(*out, 0o755); err == nil {
		err = os.WriteFile(path, doc, 0o600) // it holds the Secret
	}
	if err != nil {
		fmt.Fprintf(st.Stderr, "chaosrun export k8s: %v\n", err)
		return exitRunError
	}
	fmt.Fprintf(st.Stdout, "wrote %s: %d objects\n", path, len(m.Objects()))
	return exitOK
}

// readScript reads the workload script: beside the scenario first, then in
// the repository's bundled scripts (as a run finds it).
func readScript(scenarioFile, script string) ([]byte, error) {
	dir := ""
	if root, err := k6build.FindRoot(""); err == nil {
		dir = workloads.ScriptsDir(root)
	}
	p, err := workloads.ResolveScript(scenarioFile, script, dir)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}
