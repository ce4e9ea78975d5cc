package assertions

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// scrapeRun has one scrape per second for 10 s of two ledger replicas; the
// fault "bad" is in force from 4 s to 8 s. ledger.1's request counter
// stops growing during the fault (it is ejected) and restarts at 9 s.
func scrapeRun() *record.Run {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := &record.Run{Start: t0, End: t0.Add(10 * time.Second)}
	run.Faults = []record.FaultEvent{
		{Fault: "bad", Action: record.Applied, Actual: t0.Add(4 * time.Second)},
		{Fault: "bad", Action: record.Reverted, Actual: t0.Add(8 * time.Second)},
	}
	for i := 1; i < 10; i++ {
		at := t0.Add(time.Duration(i)*time.Second + 100*time.Millisecond)
		good := float64(100 * i)
		bad := float64(100 * min(i, 4))
		if i == 9 {
			bad = 30 // the process restarted: counters begin again
		}
		run.Scrapes = append(run.Scrapes,
			record.Scrape{Time: at, Instance: "bank", Values: map[string]float64{
				"reqs_total{host=ledger.0}": good,
				"reqs_total{host=ledger.1}": bad,
				"inflight{bulkhead=vault}":  float64(i),
			}})
	}
	run.Topology = []record.ServiceInfo{{Name: "toxiproxy", Proxies: map[string]string{"bank->ledger.1": "127.0.0.1:4001"}}}
	run.Scrapes[0].Values["client_total{host=127.0.0.1:4001}"] = 5
	run.Scrapes[8].Values["client_total{host=127.0.0.1:4001}"] = 25
	run.EndChecks = []record.EndCheck{{Name: "money", Service: "bank", OK: true}, {Name: "keys", Service: "bank", OK: false}}
	return run
}

func TestScrapeAndEndCheckAggregations(t *testing.T) {
	run := scrapeRun()
	cases := []struct {
		name, metric, window, check string
		want                        float64
		wantErr                     string
	}{
		{"counter increase whole", "scrape:reqs_total{host:ledger.0}", "whole", "sum > 0", 900, ""},
		// The 4.1 s reading still holds the second before the fault.
		{"counter increase during", "scrape:reqs_total{host:ledger.1}", "during bad", "sum > 0", 100, ""},
		{"counter rate during", "scrape:reqs_total{host:ledger.0}", "during bad", "rate > 0", 100, ""},
		{"counter restart counts from zero", "scrape:reqs_total{host:ledger.1}", "after bad", "sum > 0", 30, ""},
		{"both hosts summed", "scrape:reqs_total{instance:bank}", "before bad", "sum > 0", 600, ""},
		{"service filter", "scrape:reqs_total{service:bank,host:!ledger.0}", "whole", "sum > 0", 430, ""},
		{"gauge max", "scrape:inflight{bulkhead:vault}", "during bad", "max > 0", 7, ""},
		{"gauge avg", "scrape:inflight", "during bad", "avg > 0", 5.5, ""},
		{"gauge has no rate", "scrape:inflight", "whole", "rate > 0", 0, "not defined for inflight"},
		{"nothing matches", "scrape:reqs_total{host:ledger.9}", "whole", "sum > 0", 0, "no /metrics readings"},
		{"proxy reference", "scrape:client_total{host:@bank->ledger.1}", "whole", "sum > 0", 25, ""},
		{"unknown proxy reference", "scrape:client_total{host:@bank->vault}", "whole", "sum > 0", 0, `no proxy "bank->vault"`},
		{"end checks failed", "end_check_failures", "whole", "count == 0", 1, ""},
		{"one end check", "end_check_failures{check:money}", "whole", "count == 0", 0, ""},
		{"unknown end check", "end_check_failures{check:nope}", "whole", "count == 0", 0, "no end-of-run check"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Evaluate(run, []scenario.Assertion{{Name: "a", Metric: tc.metric, Window: tc.window, Checks: scenario.Checks(tc.check)}})[0]
			if tc.wantErr != "" {
				if !strings.Contains(v.Error, tc.wantErr) || v.Pass {
					t.Fatalf("verdict %+v, want error %q", v, tc.wantErr)
				}
				return
			}
			if v.Error != "" || math.Abs(v.Observed-tc.want) > 1e-9 {
				t.Fatalf("observed %v (error %q), want %v", v.Observed, v.Error, tc.want)
			}
		})
	}
}

func TestParseScrapeSelector(t *testing.T) {
	m, err := ParseMetric("scrape:platform_client_host_requests_total{host:ledger.1}")
	if err != nil {
		t.Fatal(err)
	}
	if m.Source != "scrape" || m.Name != "platform_client_host_requests_total" || m.String() != "scrape:platform_client_host_requests_total{host:ledger.1}" {
		t.Fatalf("parsed %+v (%s)", m, m)
	}
}
