package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/chaosrun/chaosrun/runner"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// resultsFlags are run's flags for where the results stream is received.
type resultsFlags struct {
	listen, token, cert, key string
}

func (f *resultsFlags) register(cmd *cobra.Command, st *State) {
	fs := cmd.Flags()
	fs.StringVar(&f.listen, "results-listen", "", "receive the results stream on HOST:PORT, e.g. 0.0.0.0:7000 for load processes elsewhere (default 127.0.0.1, a free port; shard k of N gets PORT+k-1)")
	fs.StringVar(&f.token, "results-token", st.Getenv("CHAOSRUN_RESULTS_TOKEN"), "the token a results stream must show in its hello (default: one made for each run, on loopback too; printed when the listen address is not loopback, for load processes elsewhere; env CHAOSRUN_RESULTS_TOKEN)")
	fs.StringVar(&f.cert, "results-tls-cert", "", "PEM certificate: the results stream speaks TLS (with --results-tls-key)")
	fs.StringVar(&f.key, "results-tls-key", "", "PEM private key of --results-tls-cert")
}

// settings checks the flags and builds the runner's results settings;
// errors are usage errors. It prints a generated token.
func (f *resultsFlags) settings(st *State) (runner.Results, error) {
	var res runner.Results
	if f.listen != "" {
		if _, _, err := net.SplitHostPort(f.listen); err != nil {
			return res, fmt.Errorf("--results-listen %q is not HOST:PORT: %w", f.listen, err)
		}
	}
	res.Listen, res.Token = f.listen, f.token
	if (f.cert == "") != (f.key == "") {
		return res, errors.New("--results-tls-cert and --results-tls-key go together")
	}
	if f.cert != "" {
		cfg, err := stream.ServerTLS(st.path(f.cert), st.path(f.key))
		if err != nil {
			return res, err
		}
		opts, err := localK6TLS(st, f.cert)
		if err != nil {
			return res, err
		}
		res.TLS, res.K6Options = cfg, opts
	}
	if !stream.IsLoopback(f.listen) && res.Token == "" {
		res.Token = stream.NewToken()
		fmt.Fprintf(st.Stderr, "results stream: token %s (generated; load processes elsewhere send it: chaosrun load as CHAOSRUN_RESULTS_TOKEN, k6 as K6_RESILIENCE_TOKEN or ?token=)\n", res.Token)
	}
	if f.listen != "" {
		res.OnListen = func(shard, addr string) {
			scheme := "tcp://" + addr
			if res.TLS != nil {
				scheme += "?tls=true"
			}
			fmt.Fprintf(st.Stderr, "results stream of %s: listening on %s\n", shard, scheme)
		}
	}
	res.OnRefused = func(err error) { fmt.Fprintf(st.Stderr, "chaosrun run: results stream: %v\n", err) }
	return res, nil
}

// localK6TLS is what the local load processes (k6 or chaosrun load) need
// to trust the receiver's certificate.
func localK6TLS(st *State, certFile string) (url.Values, error) {
	b, err := st.readFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("--results-tls-cert: %w", err)
	}
	opts, err := stream.TrustOptions(b, st.path(certFile))
	if err != nil {
		return nil, fmt.Errorf("--results-tls-cert %s: %w", certFile, err)
	}
	return opts, nil
}
