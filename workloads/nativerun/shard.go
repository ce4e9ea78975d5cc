package nativerun

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/chaosrun/chaosrun/workloads/native"
)

// Shard is the load process's side: it runs shard of spec to res, saying
// on log what it runs and how it ended. An interrupt ends the stream with
// its end marker, and is an error that says so.
func Shard(ctx context.Context, spec native.Spec, shard native.Shard, res native.Results, log io.Writer) error {
	procs, restore := limitProcs(spec, shard)
	defer restore()
	fmt.Fprintf(log, "chaosrun load: shard %s, %d stream(s), %d of %d CPUs, results to %s\n", shard, len(spec.Streams), procs, runtime.NumCPU(), res)
	sum, err := native.RunTo(ctx, spec, shard, res)
	if err != nil {
		return err
	}
	took := sum.End.Sub(sum.Start).Round(time.Millisecond)
	if ctx.Err() != nil {
		return fmt.Errorf("shard %s interrupted after %s; its stream to %s is ended", shard, took, res)
	}
	fmt.Fprintf(log, "chaosrun load: shard %s ran %s to %s", shard, took, res)
	if sum.Lost > 0 {
		fmt.Fprintf(log, " (%d samples lost)", sum.Lost)
	}
	fmt.Fprintln(log)
	return nil
}
