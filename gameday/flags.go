package gameday

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/runner/batch"
)

// Flags are chaosrun gameday's own flags: overrides, stop conditions, the
// live window, the page's address and where the record goes.
type Flags struct {
	Sets, Guards, Allow       []string
	Grace, Slide, MaxDuration time.Duration
	Listen, Token, K6, OutDir string
}

// Register adds gameday's flags to fl.
func (f *Flags) Register(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.Sets, "set", nil, "override a scenario value, e.g. bank.bulkheads=off (repeatable)")
	fl.StringArrayVar(&f.Guards, "guard", nil, "assertion of the scenario that is a stop condition: when it breaches for longer than --grace, every fault is reverted (repeatable)")
	fl.StringArrayVar(&f.Allow, "allow-target", nil, "let load reach this host or host:port besides loopback and the testbed's services (repeatable)")
	fl.DurationVar(&f.Grace, "grace", 5*time.Second, "how long a guard may breach before every fault is reverted")
	fl.DurationVar(&f.Slide, "window", 10*time.Second, "sliding window of the live SLOs")
	fl.StringVar(&f.Listen, "listen", "127.0.0.1:0", "address of the game day's page and API (other than loopback needs --token)")
	fl.StringVar(&f.Token, "token", "", "token the page and API require (default: none on loopback; env CHAOSRUN_GAMEDAY_TOKEN)")
	fl.DurationVar(&f.MaxDuration, "max-duration", time.Hour, "stop the load after this long at the latest")
	fl.StringVar(&f.K6, "k6", "", "for a workload with engine: k6, use this k6 binary (built with xk6-resilience) instead of building one")
	fl.StringVar(&f.OutDir, "out-dir", "chaosrun-results", "folder for the record, report and logs (sub-folder SCENARIO-gameday)")
}

// Check checks --grace, --window, --max-duration and the page's address
// and token, which defaults to getenv's CHAOSRUN_GAMEDAY_TOKEN; errors are
// usage errors.
func (f *Flags) Check(getenv func(string) string) error {
	if f.Token == "" {
		f.Token = getenv("CHAOSRUN_GAMEDAY_TOKEN")
	}
	if f.Grace <= 0 || f.Slide < 2*time.Second || f.MaxDuration <= 0 {
		return errors.New("--grace and --max-duration must be positive and --window at least 2s")
	}
	return CheckListen(f.Listen, f.Token)
}

// Options are the game day's options from the flags; the rest (scenario,
// testbed, load, out dir, blast radius, versions, log, Ready) is the
// caller's.
func (f *Flags) Options() Options {
	return Options{Listen: f.Listen, Token: f.Token, Guards: f.Guards, Grace: f.Grace, Slide: f.Slide,
		MaxDuration: f.MaxDuration, Overrides: f.Sets}
}

// WriteRecord writes rec's record and reports to dir, prints its table on
// stdout and says on stderr where they are and what failed to be written.
func WriteRecord(dir string, rec *record.Run, stdout, stderr io.Writer) error {
	werr := report.WriteAll(dir, rec)
	batch.PrintLines(stderr, "chaosrun gameday", werr)
	report.Table(stdout, rec)
	fmt.Fprintf(stderr, "game day record: %s (report: %s)\n", filepath.Join(dir, "run.json"), filepath.Join(dir, "report.html"))
	return werr
}
