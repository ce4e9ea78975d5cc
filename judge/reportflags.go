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

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenarioload"
)

// ReportFlags are fault apply's flags for where its events go: a judge's
// events endpoint, a file, or both.
type ReportFlags struct {
	To, Token, CA, EventsOut string
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

// ApplyFaults is chaosrun fault apply: it runs the schedule of the
// scenario file names through the Toxiproxy o names, its events reported
// as the flags say (see faults.ApplyOptions.Run). Bad flags exit 2; a
// scenario without faults is said on stdout.
func (f *ReportFlags) ApplyFaults(ctx context.Context, l scenarioload.Loader, o faults.ApplyOptions, file string, stdout, stderr io.Writer) error {
	if err := o.CheckTimes(); err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	sc, err := l.Scenario(ctx, file, nil, stderr)
	if err != nil {
		return err
	}
	u, err := o.Target(sc, stdout)
	if err != nil || u == nil {
		return err
	}
	rep, zero, closeRep, err := f.Open(ctx, l.FS, stderr, o.Delay, o.Wait)
	if err != nil {
		return exitcode.Fail(exitcode.Usage, err)
	}
	defer closeRep()
	return o.Run(ctx, u, sc, zero, rep, stdout)
}
