package runner

import (
	"strings"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
)

// scraped lists the instances whose /metrics the run reads: the reference
// targets' (they serve it), those of services that declare metrics:, and
// those a scrape: assertion selects (by service or instance, or every
// instance when it names neither). Nothing else is read: an HTTP request
// to a database or a cache is noise in its log and in the run's problems.
func scraped(sc *scenario.Scenario, instances []testbed.Instance) []testbed.Instance {
	wanted := map[string]bool{} // service names; "" for every service
	for _, a := range sc.Assertions {
		m, err := assertions.ParseMetric(a.Metric)
		if err != nil || m.Source != "scrape" {
			continue
		}
		wanted[scrapedService(m)] = true
	}
	var out []testbed.Instance
	for _, in := range instances {
		svc := sc.Services[in.Service]
		if svc == nil || svc.Run != "" || svc.Metrics != nil || wanted[""] || wanted[in.Service] {
			out = append(out, in)
		}
	}
	return out
}

// scrapedService is the service a scrape selector is limited to: its
// service: tag, or its instance: tag's service (ledger.1 → ledger); ""
// when it names neither.
func scrapedService(m assertions.Metric) string {
	for _, f := range m.Filters {
		switch {
		case f.Not:
		case f.Key == "service":
			return f.Value
		case f.Key == "instance":
			if i := strings.LastIndexByte(f.Value, '.'); i > 0 {
				return f.Value[:i]
			}
			return f.Value
		}
	}
	return ""
}
