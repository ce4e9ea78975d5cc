package scenarioload

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/engine"
)

// ErrInvalid is LoadAll's error when a scenario is wrong; its problems
// have been said.
var ErrInvalid = errors.New("invalid scenarios")

// LoadAll loads and validates every file (see Expand) before anything
// starts, saying on problems what is wrong with each, with their blast
// radius; ok, when set, hears of each that is right. When ctx ends it
// stops (stopped) with what the scenario then being loaded gave.
func (l Loader) LoadAll(ctx context.Context, files, sets, allow []string, problems io.Writer, ok func(string, *scenario.Scenario)) (scs []*scenario.Scenario, stopped bool, err error) {
	for _, file := range files {
		sc, err := l.Load(ctx, file, sets)
		if ctx.Err() != nil {
			return nil, true, err
		}
		if err == nil {
			_, err = BlastRadius(sc, allow)
		}
		if err != nil {
			fmt.Fprintln(problems, err)
			continue
		}
		if ok != nil {
			ok(file, sc)
		}
		scs = append(scs, sc)
	}
	if len(scs) < len(files) {
		return nil, false, ErrInvalid
	}
	return scs, false, nil
}

// Script reads the k6 script of sc, loaded from file: beside the scenario
// first, then in the bundled scripts (as a run finds it); at most
// workdir.MaxScript bytes, until ctx ends.
func (l Loader) Script(ctx context.Context, file string, sc *scenario.Scenario) ([]byte, error) {
	root, err := l.K6.Checkout()
	if err != nil {
		return nil, err
	}
	dir, err := BundledScripts(l.K6, root)
	if err != nil {
		return nil, err
	}
	p, err := workloads.ResolveScript(l.Path(file), sc.Workload.Script, dir)
	if err != nil {
		return nil, err
	}
	return workdir.Read(ctx, p, workdir.MaxScript, workdir.OS(p), io.ReadAll)
}

// Sources are what an exported scenario carries: its file (or catalog
// entry) and, for engine: k6, its script; errors name every part that
// could not be read.
func (l Loader) Sources(ctx context.Context, file string, sc *scenario.Scenario) (data, script []byte, err error) {
	var errs []error
	if data, err = l.Read(ctx, file); err != nil {
		errs = append(errs, err)
	}
	if e, eerr := engine.Of(sc); eerr == nil && e.Tool == "k6" {
		if script, err = l.Script(ctx, file, sc); err != nil {
			errs = append(errs, err)
		}
	}
	return data, script, errors.Join(errs...)
}
