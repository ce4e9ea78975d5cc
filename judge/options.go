package judge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// Options are chaosrun judge's flags: what to judge besides the scenario,
// where the record goes, and how to receive the shards' streams.
type Options struct {
	Sets                             []string
	Faults, OutDir                   string
	Partial, Quiet                   bool
	Listen, Events, Token, Cert, Key string
	Shards                           int
	Wait, Margin                     time.Duration
}

// DefaultOptions are judge's defaults: one shard, ten minutes' wait for
// the first hello, DefaultMargin past load's planned end.
func DefaultOptions() Options {
	return Options{OutDir: "chaosrun-results", Shards: 1, Wait: 10 * time.Minute, Margin: DefaultMargin}
}

// FileOptions checks the flags for judging results files (paths resolve
// against wd) and reads --faults' timeline (ReadTimelineFile). Every error
// is a usage error, or ctx's end.
func (o *Options) FileOptions(ctx context.Context, wd workdir.FS, files []string, versions map[string]string) (FileOptions, error) {
	fo := FileOptions{Partial: o.Partial, Versions: versions}
	if len(files) == 0 {
		return fo, errors.New("no results file: give RESULTS.jsonl… or --listen HOST:PORT")
	}
	if o.Shards != 1 || o.Events != "" || o.Cert != "" {
		return fo, errors.New("--shards, --events-listen and --tls-* go with --listen")
	}
	for _, p := range files {
		fo.Files = append(fo.Files, wd.Path(p))
	}
	if o.Faults != "" {
		tl, err := ReadTimelineFile(ctx, wd, o.Faults)
		if err != nil {
			return fo, err
		}
		fo.Timeline = &tl
	}
	return fo, nil
}

// ReceiveOptions checks the receive flags (paths resolve against wd); the
// token made when none is given, where it listens and the streams it
// refuses are said on stderr. Every error is a usage error, or ctx's end.
func (o *Options) ReceiveOptions(ctx context.Context, wd workdir.FS, stderr io.Writer) (ReceiveOptions, error) {
	ro := ReceiveOptions{Listen: o.Listen, EventsListen: o.Events, Token: o.Token, Shards: o.Shards, Wait: o.Wait, Margin: o.Margin}
	switch {
	case o.Faults != "" || o.Partial:
		return ro, errors.New("--faults and --partial go with results files; a receiving judge takes fault apply's events")
	case o.Shards < 1 || o.Shards > 1000:
		return ro, fmt.Errorf("--shards %d: want 1 to 1000", o.Shards)
	case (o.Cert == "") != (o.Key == ""):
		return ro, errors.New("--tls-cert and --tls-key go together")
	}
	for flag, addr := range map[string]string{"--listen": o.Listen, "--events-listen": o.Events} {
		if _, _, err := net.SplitHostPort(addr); addr != "" && err != nil {
			return ro, fmt.Errorf("%s %q is not HOST:PORT", flag, addr)
		}
	}
	if o.Cert != "" {
		cfg, err := stream.ServerTLS(ctx, wd.Path(o.Cert), wd.Path(o.Key))
		if err != nil {
			return ro, err
		}
		ro.TLS = cfg
	}
	if ro.Token == "" {
		ro.Token = stream.NewToken()
		fmt.Fprintf(stderr, "judge: token %s (generated; shards send it: chaosrun load as CHAOSRUN_RESULTS_TOKEN, k6 as K6_RESILIENCE_TOKEN; fault apply as --report-token)\n", ro.Token)
	}
	if !o.Quiet {
		ro.Progress = stderr
	}
	ro.OnListen = func(what, addr string) { fmt.Fprintf(stderr, "judge: %s on %s\n", what, addr) }
	ro.OnRefused = func(err error) { fmt.Fprintf(stderr, "chaosrun judge: %v\n", err) }
	return ro, nil
}
