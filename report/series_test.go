package report

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

func TestFaultSpans(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	r := &record.Run{Start: t0, End: at(60), Faults: []record.FaultEvent{
		{Fault: "a", Action: record.Applied, Scheduled: at(10), Actual: at(10.5)},
		{Fault: "b", Action: record.Applied, Actual: at(20)},
		{Fault: "a", Action: record.Reverted, Actual: at(30)},
		{Fault: "c", Action: record.Failed, Actual: at(35)},
	}}
	want := []Span{{"a", 10.5, 30}, {"b", 20, 60}}
	if got := FaultSpans(r); !reflect.DeepEqual(got, want) {
		t.Errorf("FaultSpans = %v, want %v", got, want)
	}
}

func TestParseScrapeKey(t *testing.T) {
	tests := []struct {
		in   string
		want ScrapeKey
	}{
		{"platform_inflight", ScrapeKey{Name: "platform_inflight"}},
		{"platform_rejected_total{reason=queue-timeout}", ScrapeKey{Name: "platform_rejected_total", Labels: map[string]string{"reason": "queue-timeout"}}},
		{"platform_request_duration_seconds{route=POST /vault/withdraw}_count", ScrapeKey{Name: "platform_request_duration_seconds", Labels: map[string]string{"route": "POST /vault/withdraw"}, Suffix: "_count"}},
		{"broken}{", ScrapeKey{Name: "broken}{"}},
	}
	for _, tc := range tests {
		if got := ParseScrapeKey(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseScrapeKey(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func FuzzParseScrapeKey(f *testing.F) {
	for _, s := range []string{"a", "a{b=c}", "a{b=c,d=e}_sum", "{", "}", "a{=}", "a{b}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := ParseScrapeKey(s)
		if k.Labels == nil && k.Name != s {
			t.Errorf("%q: no labels, but the name %q is not the key", s, k.Name)
		}
		if !strings.HasPrefix(s, k.Name) {
			t.Errorf("%q: name %q is not a prefix", s, k.Name)
		}
	})
}

// TestScrapeCharts: counters become per-second rates, client requests per
// host become shares, and a chart appears only when its metrics were
// scraped.
func TestScrapeCharts(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &record.Run{Start: t0, End: t0.Add(3 * time.Second)}
	if got := ScrapeCharts(r); len(got) != 0 {
		t.Fatalf("no scrapes, yet charts %v", got)
	}
	for i := range 3 {
		r.Scrapes = append(r.Scrapes, record.Scrape{Time: t0.Add(time.Duration(i) * time.Second), Instance: "bank", Values: map[string]float64{
			"platform_rejected_total{reason=queue-timeout}":                 float64(10 * i),
			"platform_bulkhead_inflight{bulkhead=vault}":                    float64(i),
			"platform_client_host_requests_total{dependency=vault,host=h1}": float64(30 * i),
			"platform_client_host_requests_total{dependency=vault,host=h2}": float64(10 * i),
			"platform_client_ejections_total{dependency=vault}":             float64(i / 2),
		}})
	}
	got := map[string][]Line{}
	for _, c := range ScrapeCharts(r) {
		got[c.Title] = c.Lines
	}
	want := map[string][]Line{
		"Server rejections by reason": {{"bank reason=queue-timeout", []Point{{1, 10}, {2, 10}}}},
		"Bulkhead in flight":          {{"bank bulkhead=vault", []Point{{0, 0}, {1, 1}, {2, 2}}}},
		"Client ejections":            {{"bank ejections_total dependency=vault", []Point{{1, 0}, {2, 1}}}},
		"Traffic share per host":      {{"bank dependency=vault,host=h1", []Point{{1, 0.75}, {2, 0.75}}}, {"bank dependency=vault,host=h2", []Point{{1, 0.25}, {2, 0.25}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("charts:\n got %v\nwant %v", got, want)
	}
}
