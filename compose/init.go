package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
)

// InitFlags are chaosrun init's flags: the Compose files to start from
// (merged in order), the profiles to enable, the folder to write into and
// whether to overwrite.
type InitFlags struct {
	// URL, instead of Files, is a running service's address.
	URL      string
	Files    []string
	Profiles []string
	Out      string
	Force    bool
}

// Init is chaosrun init: it writes a starter scenario for the Compose
// project into the out folder (paths resolve against wd) and says on
// stdout what to do next. Bad flags, a project it cannot start from and a
// file that exists exit 2. It gives up when ctx ends.
func (f *InitFlags) Init(ctx context.Context, wd workdir.FS, stdout io.Writer) error {
	switch {
	case f.URL != "" && len(f.Files) > 0:
		return exitcode.Failf(exitcode.Usage, "give --compose FILE or --url URL, not both")
	case f.URL != "":
		s, err := URLStarter(f.URL)
		if err != nil {
			return exitcode.Fail(exitcode.Usage, err)
		}
		return f.write(s, wd, stdout, "", "")
	case len(f.Files) == 0:
		return exitcode.Failf(exitcode.Usage, "--compose FILE or --url URL is required: init writes a starter for a Compose project or for a "+
			"service that runs at a URL; or start from a catalog scenario (chaosrun catalog show bank-slow-vault > my-scenario.yaml) "+
			"and describe your own services as docs/your-services.md says (image:, command: or external: host:port)")
	}
	out := wd.Path(f.Out)
	var files, rels []string
	for _, name := range f.Files {
		file := wd.Path(name)
		rel, err := filepath.Rel(out, file)
		if err != nil {
			return exitcode.Fail(exitcode.Usage, err)
		}
		files, rels = append(files, file), append(rels, filepath.ToSlash(rel))
	}
	s, err := NewStarter(ctx, files, rels, Options{Profiles: f.Profiles})
	if err != nil {
		if ctx.Err() != nil {
			return exitcode.Fail(exitcode.Interrupted, err)
		}
		return exitcode.Fail(exitcode.Usage, err)
	}
	profiles := ""
	for _, p := range f.Profiles {
		profiles += " --profile " + p
	}
	return f.write(s, wd, stdout, profiles, profiles+" --testbed docker")
}

// write writes s into the out folder and says on stdout what to run next
// (validate with validateFlags, then run with runFlags); a file that
// exists exits 2.
func (f *InitFlags) write(s *Starter, wd workdir.FS, stdout io.Writer, validateFlags, runFlags string) error {
	path, err := s.Write(wd.Path(f.Out), f.Force)
	if errors.Is(err, fs.ErrExist) {
		return exitcode.Fail(exitcode.Usage, err)
	} else if err != nil {
		return exitcode.Fail(exitcode.RunError, err)
	}
	fmt.Fprintf(stdout, "wrote %s\nnext: chaosrun validate%s %s, then chaosrun run%s %s\n", path, validateFlags, path, runFlags, path)
	return nil
}

// Profiles are the profiles given, else those COMPOSE_PROFILES names
// (comma-separated), as docker compose reads them.
func Profiles(given []string, getenv func(string) string) []string {
	if len(given) > 0 {
		return given
	}
	var out []string
	for _, p := range strings.Split(getenv("COMPOSE_PROFILES"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
