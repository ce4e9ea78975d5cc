package metrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// Config says where a run goes; an empty URL turns that sink off.
type Config struct {
	// PromRW is a Prometheus remote-write URL, e.g.
	// http://127.0.0.1:9090/api/v1/write.
	PromRW string
	// OTLP is an OTLP/HTTP metrics URL, e.g. http://127.0.0.1:4318/v1/metrics.
	OTLP string
	// GrafanaURL is a Grafana's base URL; fault windows and the run become
	// annotations there. GrafanaToken is a service-account token.
	GrafanaURL, GrafanaToken string
	// Labels are added to every series (e.g. env=ci, pr=123).
	Labels map[string]string
	// Client makes the HTTP requests (default: a client with a 30 s timeout).
	Client *http.Client
	// Span is how much run time one request carries (default 1 minute).
	Span time.Duration
}

// Enabled reports whether any sink is set.
func (c Config) Enabled() bool { return c.PromRW != "" || c.OTLP != "" || c.GrafanaURL != "" }

// Result counts what an export sent.
type Result struct {
	Series, Points, Requests, Annotations int
}

// String says what was sent, in one line.
func (r Result) String() string {
	return fmt.Sprintf("%d series, %d points in %d requests, %d annotations", r.Series, r.Points, r.Requests, r.Annotations)
}

// writer is a metrics sink.
type writer interface {
	write(ctx context.Context, batch []Series) error
}

// Export sends a run record to every sink cfg names: its series to
// Prometheus remote write and OTLP, its fault windows to Grafana. Every
// sink is tried; the errors are joined.
func Export(ctx context.Context, r *record.Run, cfg Config) (Result, error) {
	var res Result
	if !cfg.Enabled() {
		return res, nil
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Span <= 0 {
		cfg.Span = time.Minute
	}
	if err := cfg.Check(); err != nil {
		return res, err
	}
	var errs []error
	if cfg.PromRW != "" || cfg.OTLP != "" {
		series, err := Collect(r, cfg.Labels)
		if err != nil {
			return res, err
		}
		res.Series = len(series)
		batches := Batches(series, cfg.Span)
		for _, b := range batches {
			for _, s := range b {
				res.Points += len(s.Points)
			}
		}
		if cfg.PromRW != "" {
			errs = append(errs, send(ctx, func() (writer, func(), error) {
				w, err := newPromWriter(cfg.PromRW, cfg.Client)
				return w, func() {}, err
			}, batches, &res))
		}
		if cfg.OTLP != "" {
			errs = append(errs, send(ctx, func() (writer, func(), error) {
				w, err := newOTLPWriter(ctx, cfg.OTLP, cfg.Client, r.Start)
				if err != nil {
					return nil, nil, err
				}
				return w, func() { w.close(context.Background()) }, nil
			}, batches, &res))
		}
	}
	if cfg.GrafanaURL != "" {
		n, err := annotate(ctx, r, cfg)
		res.Annotations = n
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

func send(ctx context.Context, open func() (writer, func(), error), batches [][]Series, res *Result) error {
	w, closeFn, err := open()
	if err != nil {
		return err
	}
	defer closeFn()
	for _, b := range batches {
		if err := w.write(ctx, b); err != nil {
			return err
		}
		res.Requests++
	}
	return nil
}

func annotate(ctx context.Context, r *record.Run, cfg Config) (int, error) {
	g, err := newGrafana(cfg.GrafanaURL, cfg.GrafanaToken, cfg.Client)
	if err != nil {
		return 0, err
	}
	return g.annotate(ctx, Annotations(r), "run:"+RunID(r))
}

// Check refuses URLs that are not http(s) and extra labels that are not
// label names or that the export sets itself.
func (c Config) Check() error {
	for _, u := range []struct{ flag, url string }{{"prometheus remote write", c.PromRW}, {"otlp", c.OTLP}, {"grafana", c.GrafanaURL}} {
		if u.url == "" {
			continue
		}
		p, err := url.Parse(u.url)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("%s URL %q: want http(s)://HOST[:PORT][/PATH]", u.flag, u.url)
		}
	}
	for k := range c.Labels {
		if k == "" || sanitize(k) != k || reserved[k] || k[0] == '_' {
			return fmt.Errorf("export label %q: want a label name ([a-zA-Z][a-zA-Z0-9_]*) other than job, instance, service, quantile, le, chaosrun_run, chaosrun_scenario", k)
		}
	}
	return nil
}

// Batches splits series by run time into requests of span each, every
// series' points kept in time order across them.
func Batches(series []Series, span time.Duration) [][]Series {
	var first, last time.Time
	for _, s := range series {
		for _, p := range s.Points {
			if first.IsZero() || p.T.Before(first) {
				first = p.T
			}
			if p.T.After(last) {
				last = p.T
			}
		}
	}
	if first.IsZero() {
		return nil
	}
	var out [][]Series
	next := make([]int, len(series))
	for from := first; !from.After(last); from = from.Add(span) {
		to := from.Add(span)
		var batch []Series
		for i, s := range series {
			j := next[i]
			for j < len(s.Points) && s.Points[j].T.Before(to) {
				j++
			}
			if j > next[i] {
				part := s
				part.Points = s.Points[next[i]:j]
				batch = append(batch, part)
				next[i] = j
			}
		}
		if len(batch) > 0 {
			out = append(out, batch)
		}
	}
	return out
}
