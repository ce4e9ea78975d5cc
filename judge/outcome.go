package judge

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
	"github.com/chaosrun/chaosrun/runner/batch"
)

// WriteRecord writes rec's record and reports to dir, prints its table on
// stdout and says on stderr what failed to be written and where the
// record is.
func WriteRecord(dir string, rec *record.Run, stdout, stderr io.Writer) error {
	werr := report.WriteAll(dir, rec)
	report.Table(stdout, rec)
	batch.PrintLines(stderr, "chaosrun judge", werr)
	fmt.Fprintf(stderr, "run record: %s\n", filepath.Join(dir, "run.json"))
	return werr
}

// Failed names the assertions whose verdicts in rec fail.
func Failed(rec *record.Run) []string {
	var failed []string
	for _, v := range rec.Verdicts {
		if !v.Pass {
			failed = append(failed, v.Assertion)
		}
	}
	return failed
}
