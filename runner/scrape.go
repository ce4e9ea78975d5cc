package runner

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/testbed"
)

// Scraper reads every instance's /metrics once a second and keeps what it
// read for the run record.
type Scraper struct {
	client   *http.Client
	onScrape func(record.Scrape)
	mu       sync.Mutex
	out      []record.Scrape
	tries    map[string]int
	errs     map[string]int
	lastErr  map[string]error
}

// NewScraper returns a scraper; onScrape, if not nil, sees every reading as
// it arrives (game days plot them live).
func NewScraper(onScrape func(record.Scrape)) *Scraper {
	return &Scraper{client: &http.Client{Timeout: 800 * time.Millisecond}, onScrape: onScrape,
		tries: map[string]int{}, errs: map[string]int{}, lastErr: map[string]error{}}
}

// Run scrapes until ctx ends.
func (s *Scraper) Run(ctx context.Context, instances []testbed.Instance, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.Once(ctx, instances)
	}
}

// Once reads every instance's metrics once. A reading before load starts
// is the baseline of counters that did not start with the run (an
// external service's).
func (s *Scraper) Once(ctx context.Context, instances []testbed.Instance) {
	var wg sync.WaitGroup
	for _, in := range instances {
		wg.Go(func() {
			vals, err := s.scrape(ctx, in.MetricsURL())
			if ctx.Err() != nil {
				return // cut short by the end: no failure of the instance
			}
			s.mu.Lock()
			s.tries[in.Name]++
			if err != nil {
				s.errs[in.Name]++
				s.lastErr[in.Name] = err
				s.mu.Unlock()
				return
			}
			sc := record.Scrape{Time: time.Now(), Instance: in.Name, Values: vals}
			s.out = append(s.out, sc)
			s.mu.Unlock()
			if s.onScrape != nil {
				s.onScrape(sc)
			}
		})
	}
	wg.Wait()
}

// scrape reads one /metrics page into "name{labels}" → value, leaving out
// the Go runtime's and the process's own families.
func (s *Scraper) scrape(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return parseMetrics(io.LimitReader(resp.Body, 4<<20))
}

// parseMetrics flattens a Prometheus text page.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, fam := range fams {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "promhttp_") {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := make([]string, 0, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
				out[key+"_sum"] = m.GetHistogram().GetSampleSum()
			case m.GetSummary() != nil:
				out[key+"_count"] = float64(m.GetSummary().GetSampleCount())
				out[key+"_sum"] = m.GetSummary().GetSampleSum()
			case m.GetUntyped() != nil:
				out[key] = m.GetUntyped().GetValue()
			}
		}
	}
	return out, nil
}

// Results are the readings in time order and the failed scrapes per instance.
func (s *Scraper) Results() ([]record.Scrape, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sort.SliceStable(s.out, func(i, j int) bool { return s.out[i].Time.Before(s.out[j].Time) })
	return s.out, s.errs
}

// ScrapeFailure is how often one instance's /metrics could not be read.
type ScrapeFailure struct {
	Instance      string
	Failed, Tries int
	Last          error
}

// Failures lists the instances whose /metrics could not always be read,
// by name.
func (s *Scraper) Failures() []ScrapeFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ScrapeFailure
	for _, n := range slices.Sorted(maps.Keys(s.errs)) {
		out = append(out, ScrapeFailure{Instance: n, Failed: s.errs[n], Tries: s.tries[n], Last: s.lastErr[n]})
	}
	return out
}
