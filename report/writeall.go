package report

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/chaosrun/chaosrun/record"
)

// allFiles are the files WriteAll writes, each with its writer, in order.
var allFiles = []struct {
	name  string
	write func(string, *record.Run) error
}{
	{"run.json", record.WriteJSON},
	{"summary.md", WriteMarkdown},
	{"report.html", WriteHTML},
	{"junit.xml", func(p string, r *record.Run) error { return WriteJUnit(p, r) }},
}

// WriteAll writes a run's record and reports into dir: run.json,
// summary.md, report.html and junit.xml. It writes every file it can and
// returns the failures of the others, joined.
func WriteAll(dir string, r *record.Run) error {
	var errs []error
	for _, f := range allFiles {
		if err := f.write(filepath.Join(dir, f.name), r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ClearStale removes from dir what an earlier run left there (its record,
// reports, logs and half-written .tmp files) before a new run writes into
// it, so that a run that dies or cannot write leaves no earlier verdict
// beside its own logs for CI to read.
func ClearStale(dir string) error {
	var errs []error
	rm := func(p string) {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	for _, f := range allFiles {
		rm(filepath.Join(dir, f.name))
		rm(filepath.Join(dir, f.name+".tmp"))
	}
	rm(filepath.Join(dir, "logs"))
	return errors.Join(errs...)
}
