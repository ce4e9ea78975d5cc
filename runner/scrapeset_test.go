package runner

import (
	"slices"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
)

func TestScraped(t *testing.T) {
	services := map[string]*scenario.Service{
		"bank":  {Run: "bankservice"},
		"api":   {Image: "api-local:1", Metrics: &scenario.Metrics{Path: "/prom"}},
		"db":    {Image: "postgres-local:15-bookworm"},
		"cache": {Image: "redis-local:7-bookworm", Replicas: 2},
	}
	instances := []testbed.Instance{{Service: "bank", Name: "bank"}, {Service: "api", Name: "api"},
		{Service: "db", Name: "db"}, {Service: "cache", Index: 0, Name: "cache.0"}, {Service: "cache", Index: 1, Name: "cache.1"}}
	for _, tc := range []struct {
		name    string
		metrics []string
		want    []string
	}{
		{"targets and declared metrics only", nil, []string{"bank", "api"}},
		{"a k6 metric asks for nothing", []string{"http_req_duration{api:List}"}, []string{"bank", "api"}},
		{"a scrape assertion by service", []string{"scrape:redis_up{service:cache}"}, []string{"bank", "api", "cache.0", "cache.1"}},
		{"by instance", []string{"scrape:pg_up{instance:db}"}, []string{"bank", "api", "db"}},
		{"by replica", []string{"scrape:redis_up{instance:cache.1}"}, []string{"bank", "api", "cache.0", "cache.1"}},
		{"a negated service is no limit", []string{"scrape:up{service:!bank}"}, []string{"bank", "api", "db", "cache.0", "cache.1"}},
		{"naming none reads all", []string{"scrape:up"}, []string{"bank", "api", "db", "cache.0", "cache.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scenario.Scenario{Services: services}
			for _, m := range tc.metrics {
				sc.Assertions = append(sc.Assertions, scenario.Assertion{Name: "a", Metric: m})
			}
			var got []string
			for _, in := range scraped(sc, instances) {
				got = append(got, in.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("scraped %v, want %v", got, tc.want)
			}
		})
	}
}
