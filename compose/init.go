package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
)

// InitFlags are chaosrun init's flags: the Compose file to start from,
// the folder to write into and whether to overwrite.
type InitFlags struct {
	File, Out string
	Force     bool
}

// Register adds init's flags to fl.
func (f *InitFlags) Register(fl *pflag.FlagSet) {
	fl.StringVar(&f.File, "compose", "", "the Compose file to start from (required)")
	fl.StringVar(&f.Out, "out", ".", "folder to write the scenario and its k6 script into")
	fl.BoolVar(&f.Force, "force", false, "overwrite files that exist")
}

// Init is chaosrun init: it writes a starter scenario and its k6 script
// for the Compose file into the out folder (paths resolve against wd) and
// says on stdout what to do next. Bad flags, a Compose file it cannot
// start from and files that exist exit 2. It gives up when ctx ends.
func (f *InitFlags) Init(ctx context.Context, wd workdir.FS, stdout io.Writer) error {
	if f.File == "" {
		return exitcode.Failf(exitcode.Usage, "--compose FILE is required")
	}
	file, out := wd.Path(f.File), wd.Path(f.Out)
	rel, err := filepath.Rel(out, file)
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	s, err := NewStarter(ctx, file, filepath.ToSlash(rel))
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	scenarioPath, scriptPath, err := s.Write(out, f.Force)
	if errors.Is(err, fs.ErrExist) {
		return exitcode.Fail(exitcode.Usage, err)
	} else if err != nil {
		return exitcode.Fail(exitcode.RunError, err)
	}
	fmt.Fprintf(stdout, "wrote %s and %s\nnext: chaosrun validate %s, then chaosrun run --testbed docker %s\n", scenarioPath, scriptPath, scenarioPath, scenarioPath)
	return nil
}
