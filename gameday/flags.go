package gameday

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
)

// Flags are chaosrun gameday's own flags: overrides, stop conditions, the
// live window, the page's address and where the record goes.
type Flags struct {
	Sets, Guards, Allow       []string
	Grace, Slide, MaxDuration time.Duration
	Listen, Token, K6, OutDir string
}

// DefaultFlags are gameday's own flags' defaults: a guard's grace of 5s,
// a 10s live window, the page on a free loopback port, an hour at most.
func DefaultFlags() Flags {
	return Flags{Grace: 5 * time.Second, Slide: 10 * time.Second, Listen: "127.0.0.1:0", MaxDuration: time.Hour, OutDir: "chaosrun-results"}
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
	report.PrintLines(stderr, "chaosrun gameday", werr)
	report.Table(stdout, rec)
	fmt.Fprintf(stderr, "game day record: %s (report: %s)\n", filepath.Join(dir, "run.json"), filepath.Join(dir, "report.html"))
	return werr
}
