package report

import (
	"errors"
	"path/filepath"

	"github.com/chaosrun/chaosrun/record"
)

// allFiles are the names WriteAll writes, in its order.
var allFiles = []string{"run.json", "summary.md", "report.html", "junit.xml"}

// WriteAll writes a run's record and reports into dir: run.json,
// summary.md, report.html and junit.xml. It writes every file it can and
// returns the failures of the others, joined.
func WriteAll(dir string, r *record.Run) error {
	writers := []func(string, *record.Run) error{
		record.WriteJSON, WriteMarkdown, WriteHTML,
		func(p string, r *record.Run) error { return WriteJUnit(p, r) },
	}
	var errs []error
	for i, write := range writers {
		if err := write(filepath.Join(dir, allFiles[i]), r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
