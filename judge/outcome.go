package judge

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/report"
)

// WriteRecord writes rec's record and reports to dir, prints its table on
// stdout and says on stderr what failed to be written and where the
// record is.
func WriteRecord(dir string, rec *record.Run, stdout, stderr io.Writer) error {
	werr := report.WriteAll(dir, rec)
	report.Table(stdout, rec)
	report.PrintLines(stderr, "chaosrun judge", werr)
	fmt.Fprintf(stderr, "run record: %s\n", filepath.Join(dir, "run.json"))
	return werr
}
