package judge

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/internal/workdir"
)

// ReportFlags are fault apply's flags for where its events go: a judge's
// events endpoint, a file, or both.
type ReportFlags struct {
	To, Token, CA, EventsOut string
}

// Register adds the report flags to fl; token is --report-token's default
// (the environment's CHAOSRUN_RESULTS_TOKEN).
func (f *ReportFlags) Register(fl *pflag.FlagSet, token string) {
	fl.StringVar(&f.To, "report-to", "", "a judge's events endpoint, http(s)://HOST:PORT: the schedule's zero is load's start there (plus --delay), and each event is sent to it")
	fl.StringVar(&f.Token, "report-token", token, "the judge's token (env CHAOSRUN_RESULTS_TOKEN)")
	fl.StringVar(&f.CA, "report-ca", "", "PEM CA to trust for an https --report-to")
	fl.StringVar(&f.EventsOut, "events-out", "", "write each event to this file, one JSON object a line (chaosrun judge --faults reads it)")
}

// Open makes the event report, which says its failures on stderr, and
// the schedule's zero (load's start at the judge, waited for up to wait,
// plus delay; or now plus delay), with paths resolved against wd (read
// until ctx ends); close closes the events file.
func (f *ReportFlags) Open(ctx context.Context, wd workdir.FS, stderr io.Writer, delay, wait time.Duration) (*EventReport, func(context.Context) (time.Time, error), func(), error) {
	rep := &EventReport{Log: stderr}
	zero := func(context.Context) (time.Time, error) { return time.Now().Add(delay), nil }
	closeFn := func() {}
	if f.To != "" {
		if f.Token == "" {
			return nil, nil, nil, errors.New("--report-to needs the judge's token (--report-token or CHAOSRUN_RESULTS_TOKEN)")
		}
		client := &http.Client{Timeout: 10 * time.Second}
		if f.CA != "" {
			pem, err := wd.ReadFile(ctx, f.CA, workdir.MaxSmall)
			pool := x509.NewCertPool()
			if err != nil || !pool.AppendCertsFromPEM(pem) {
				return nil, nil, nil, fmt.Errorf("--report-ca %s: no PEM certificate (%v)", f.CA, err)
			}
			client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
		}
		rep.Reporter = &Reporter{URL: f.To, Token: f.Token, Client: client}
		zero = func(ctx context.Context) (time.Time, error) {
			fmt.Fprintf(stderr, "fault apply: waiting for load to start at the judge %s\n", f.To)
			t, err := rep.Reporter.Start(ctx, wait)
			return t.Add(delay), err
		}
	}
	if f.EventsOut != "" {
		file, err := os.Create(wd.Path(f.EventsOut))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--events-out: %w", err)
		}
		rep.File, closeFn = file, func() { file.Close() }
	}
	return rep, zero, closeFn, nil
}
