package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/workloads/engine"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// ResultsFlags are the flags for where a run's results stream is
// received (run and gameday).
type ResultsFlags struct {
	Listen, Token, Cert, Key string
}

// Settings checks the flags (paths resolve against wd) and builds the
// runner's results settings; errors are usage errors. A generated token,
// the listen addresses and refused streams are said on stderr.
func (f *ResultsFlags) Settings(ctx context.Context, wd workdir.FS, stderr io.Writer) (engine.Results, error) {
	var res engine.Results
	if f.Listen != "" {
		if _, _, err := net.SplitHostPort(f.Listen); err != nil {
			return res, fmt.Errorf("--results-listen %q is not HOST:PORT: %w", f.Listen, err)
		}
	}
	res.Listen, res.Token = f.Listen, f.Token
	if (f.Cert == "") != (f.Key == "") {
		return res, errors.New("--results-tls-cert and --results-tls-key go together")
	}
	if f.Cert != "" {
		cfg, err := stream.ServerTLS(ctx, wd.Path(f.Cert), wd.Path(f.Key))
		if err != nil {
			return res, err
		}
		opts, err := localK6TLS(ctx, wd, f.Cert)
		if err != nil {
			return res, err
		}
		res.TLS, res.K6Options = cfg, opts
	}
	if !stream.IsLoopback(f.Listen) && res.Token == "" {
		res.Token = stream.NewToken()
		fmt.Fprintf(stderr, "results stream: token %s (generated; load processes elsewhere send it: chaosrun load as CHAOSRUN_RESULTS_TOKEN, k6 as K6_RESILIENCE_TOKEN or ?token=)\n", res.Token)
	}
	if f.Listen != "" {
		res.OnListen = func(shard, addr string) {
			scheme := "tcp://" + addr
			if res.TLS != nil {
				scheme += "?tls=true"
			}
			fmt.Fprintf(stderr, "results stream of %s: listening on %s\n", shard, scheme)
		}
	}
	res.OnRefused = func(err error) { fmt.Fprintf(stderr, "chaosrun run: results stream: %v\n", err) }
	return res, nil
}

// localK6TLS is what the local load processes (k6 or chaosrun load) need
// to trust the receiver's certificate.
func localK6TLS(ctx context.Context, wd workdir.FS, certFile string) (url.Values, error) {
	b, err := wd.ReadFile(ctx, certFile, workdir.MaxSmall)
	if err != nil {
		return nil, fmt.Errorf("--results-tls-cert: %w", err)
	}
	opts, err := stream.TrustOptions(b, wd.Path(certFile))
	if err != nil {
		return nil, fmt.Errorf("--results-tls-cert %s: %w", certFile, err)
	}
	return opts, nil
}
