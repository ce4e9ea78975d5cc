package nativerun

import (
	"context"
	"errors"
	"fmt"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/workloads/native"
)

// Options are chaosrun load's settings, as its flags give them: the workload (a spec, or a scenario
// aimed at targets), the shard to run and where its windows go.
type Options struct {
	Spec, Shard, Results string
	Sets, Targets        []string
	Seed                 int64
	// CPUProfile, when set, is where the process's CPU profile goes.
	CPUProfile string
}

// DefaultShard is --shard's default: the whole workload in one process.
const DefaultShard = "0/1"

// ParseShard is --shard's shard; errors are usage errors.
func (o *Options) ParseShard() (native.Shard, error) {
	shard, err := native.ParseShard(o.Shard)
	if err != nil {
		return shard, fmt.Errorf("--shard: %w", err)
	}
	return shard, nil
}

// CheckWorkload checks that the workload is named once: by --spec or by
// a scenario (scenario says whether one is given); errors are usage
// errors.
func (o *Options) CheckWorkload(scenario bool) error {
	switch {
	case o.Spec != "" && scenario:
		return errors.New("give --spec FILE or a scenario, not both")
	case o.Spec != "" && (len(o.Targets) > 0 || len(o.Sets) > 0 || o.Seed != 0):
		return errors.New("--target, --set and --seed go with a scenario; a --spec is complete")
	case o.Spec == "" && !scenario:
		return errors.New("no workload: give --spec FILE or a scenario file")
	}
	return nil
}

// ReadSpec reads --spec's file from wd, at most workdir.MaxSpec bytes; it
// gives up when ctx ends.
func (o *Options) ReadSpec(ctx context.Context, wd workdir.FS) (native.Spec, error) {
	b, err := wd.ReadFile(ctx, o.Spec, workdir.MaxSpec)
	if err != nil {
		return native.Spec{}, err
	}
	return native.ReadSpec(o.Spec, b)
}

// ResultsTo is where --results sends the windows (files resolve against
// wd), with the stream's token; errors are usage errors, or ctx's end
// while its CA file is read.
func (o *Options) ResultsTo(ctx context.Context, wd workdir.FS, token string) (native.Results, error) {
	if o.Results == "" {
		return native.Results{}, errors.New("--results is required: tcp://HOST:PORT of a receiver, or a file")
	}
	res, err := native.ParseResults(o.Results, token, func(p string) ([]byte, error) { return wd.ReadFile(ctx, p, workdir.MaxSmall) })
	if err != nil {
		return res, fmt.Errorf("--results: %w", err)
	}
	if res.Dial == nil {
		res.File = wd.Path(res.File)
	}
	return res, nil
}
