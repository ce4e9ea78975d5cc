package k8s

import (
	"context"
	"errors"
	"io"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/scenarioload"
)

// Export is chaosrun export k8s: it writes the manifests of the scenario
// in file (to --out's folder, else stdout) and says on stderr what the
// user must know of them. A scenario a cluster cannot run exits 2.
func (f *Flags) Export(ctx context.Context, l scenarioload.Loader, stdout, stderr io.Writer, file string) error {
	sc, err := l.Scenario(ctx, file, nil, stderr)
	if err != nil {
		return err
	}
	o, generated, caErr := f.Settings(ctx, l.FS)
	o.ScenarioFile, o.Script, err = l.Sources(ctx, file, sc)
	if err := errors.Join(err, caErr); err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	m, err := Build(sc, o)
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	doc, err := m.YAML(Header(sc, file, m, o))
	if err != nil {
		return exitcode.Fail(exitcode.RunError, err)
	}
	Notes(stderr, m, o, generated)
	err = f.Write(l.FS, stdout, sc.Name, doc, len(m.Objects()))
	if err != nil && f.Out != "" {
		return exitcode.Fail(exitcode.RunError, err)
	}
	return err
}
