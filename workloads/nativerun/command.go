package nativerun

import (
	"context"
	"fmt"
	"io"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/native"
)

// Loader reads the scenario a command line names, applies --set
// overrides and validates it (scenarioload.Loader).
type Loader interface {
	Load(ctx context.Context, file string, sets []string) (*scenario.Scenario, error)
}

// RunShard is chaosrun load: it runs the flags' shard of the workload the
// flags and args name and streams its windows where --results says, with
// token (the environment's TokenEnv). Bad usage, spec or scenario exits
// 2; a receiver that cannot be reached or a broken stream 3.
func (o *Options) RunShard(ctx context.Context, wd workdir.FS, l Loader, stderr io.Writer, token string, args []string) error {
	shard, err := o.ParseShard()
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	if o.CPUProfile != "" {
		stop, err := startCPUProfile(o.CPUProfile)
		if err != nil {
			return exitcode.Fail(exitcode.Usage, err)
		}
		defer stop()
	}
	spec, err := o.workload(ctx, wd, l, stderr, args)
	if err != nil {
		return err
	}
	res, err := o.ResultsTo(ctx, wd, token)
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	if err := native.Check(spec, shard); err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	if err := Shard(ctx, spec, shard, res, stderr); err != nil {
		return exitcode.Fail(exitcode.Harness(ctx), err)
	}
	return nil
}

// workload is the spec the flags and args name: --spec's JSON, or a
// scenario's native workload aimed at --target's URLs.
func (o *Options) workload(ctx context.Context, wd workdir.FS, l Loader, stderr io.Writer, args []string) (native.Spec, error) {
	if err := o.CheckWorkload(len(args) > 0); err != nil {
		return native.Spec{}, exitcode.Fail(exitcode.Usage, err)
	}
	if o.Spec != "" {
		spec, err := o.ReadSpec(ctx, wd)
		if err != nil {
			return native.Spec{}, exitcode.Fail(exitcode.Usage, err)
		}
		return spec, nil
	}
	sc, err := l.Load(ctx, args[0], o.Sets)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return native.Spec{}, exitcode.Exit(exitcode.Usage)
	}
	spec, err := native.ForTargets(sc, o.Targets, o.Seed)
	if err != nil {
		return native.Spec{}, exitcode.Fail(exitcode.Usage, err)
	}
	return spec, nil
}
