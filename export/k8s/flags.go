package k8s

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// Flags are chaosrun export k8s's flags: the manifests' options, where
// they are written and the results CA's file.
type Flags struct {
	Options
	// Out is the folder for SCENARIO.yaml; "" prints the manifests.
	Out string
	// CA is the results CA's PEM file.
	CA string
}

// DefaultFlags are export k8s's defaults: one load shard, the images
// `chaosrun images` names, a fault schedule 30s after Toxiproxy is ready.
func DefaultFlags() Flags {
	return Flags{Options: Options{Parallelism: 1, Image: "chaosrun:latest", K6Image: "chaosrun-k6:latest", FaultDelay: 30 * time.Second}}
}

// Settings are the manifests' options with fresh secrets (Toxiproxy's
// token, the seed, the results token when none is given: generated says
// so) and the results CA read from wd.
func (f *Flags) Settings(ctx context.Context, wd workdir.FS) (o Options, generated bool, err error) {
	o = f.Options
	o.ToxiproxyToken, o.Seed = stream.NewToken(), rand.Int64N(1<<31)+1
	generated = o.ResultsToken == ""
	if generated {
		o.ResultsToken = stream.NewToken()
	}
	if f.CA != "" {
		if o.ResultsCA, err = wd.ReadFile(ctx, f.CA, workdir.MaxSmall); err != nil {
			err = fmt.Errorf("--results-ca: %w", err)
		}
	}
	return o, generated, err
}

// Header is the manifests' leading comment for sc, read from file.
func Header(sc *scenario.Scenario, file string, m *Manifests, o Options) string {
	load := fmt.Sprintf("the load runs as Job %s, %d Pod(s) of `chaosrun load`, one shard each", LoadJobName, o.Parallelism)
	if m.TestRun != nil {
		load = "the TestRun needs the k6-operator"
	}
	return fmt.Sprintf("chaosrun export k8s: scenario %s (%s).\nkubectl apply -f this file; %s. The Secret holds tokens.", sc.Name, filepath.Base(file), load)
}

// Notes says on stderr what the user must know of the manifests: the
// generated token an outside receiver needs, the judge Job.
func Notes(stderr io.Writer, m *Manifests, o Options, generated bool) {
	if generated && o.ResultsAddr != "" {
		fmt.Fprintf(stderr, "results stream token: %s (generated; give it to the receiver: chaosrun judge --listen HOST:PORT --token …)\n", o.ResultsToken)
	}
	if m.JudgeJob != nil {
		fmt.Fprintf(stderr, "chaosrun export k8s: Job %s judges the run: its log ends with the verdicts, and it fails on a breach\n", JudgeName)
	}
}

// Write writes doc, the manifests of scenario name, to --out's folder
// (resolved against wd) and says so on stdout, or prints it when there
// is no --out.
func (f *Flags) Write(wd workdir.FS, stdout io.Writer, name string, doc []byte, objects int) error {
	if f.Out == "" {
		_, err := stdout.Write(doc)
		return err
	}
	dir := wd.Path(f.Out)
	path := filepath.Join(dir, name+".yaml")
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		err = os.WriteFile(path, doc, 0o600) // it holds the Secret
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d objects\n", filepath.Join(f.Out, name+".yaml"), objects)
	return nil
}
