package metrics

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

var t0 = time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)

// synthRun is a 4-window run: status 503 only in window 1, a fault from
// 1.5 s to 2.5 s, one scrape, two verdicts (one failed).
func synthRun(t *testing.T) *record.Run {
	t.Helper()
	h := record.NewHist()
	for _, v := range []int64{1000, 2000, 3000, 100000} { // 1, 2, 3, 100 ms
		h.RecordValue(v)
	}
	enc, err := record.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	ok := map[string]string{"api": "Get", "status": "200", "job": "mine"}
	bad := map[string]string{"api": "Get", "status": "503"}
	win := func(i int, extra ...record.Series) record.Window {
		ss := []record.Series{
			{Metric: "http_req_duration", Kind: record.Trend, Tags: ok, Count: 4, Max: 100, Hist: enc},
			{Metric: "http_reqs", Kind: record.Counter, Tags: ok, Count: 4, Sum: 4},
			{Metric: "http_req_failed", Kind: record.Rate, Tags: ok, Count: 4},
			{Metric: "vus", Kind: record.Gauge, Count: 1, Last: 7},
			{Metric: "dropped_iterations", Kind: record.Counter, Tags: map[string]string{"scenario": "get"}, Count: 1, Sum: 1},
		}
		return record.Window{Start: t0.Add(time.Duration(i) * time.Second), Series: append(ss, extra...)}
	}
	return &record.Run{Scenario: "synth", Start: t0, End: t0.Add(4 * time.Second),
		Windows: []record.Window{win(0), win(1,
			record.Series{Metric: "http_reqs", Kind: record.Counter, Tags: bad, Count: 2, Sum: 2},
			record.Series{Metric: "http_req_failed", Kind: record.Rate, Tags: bad, Count: 2, NonZero: 2},
			record.Series{Metric: "http_req_duration", Kind: record.Trend, Tags: bad, Count: 2, Max: 100, Hist: enc},
		), win(2), win(3)},
		Faults: []record.FaultEvent{
			{Fault: "slow", Kind: "latency", Target: "a->b", Action: record.Applied, Actual: t0.Add(1500 * time.Millisecond)},
			{Fault: "slow", Kind: "latency", Target: "a->b", Action: record.Reverted, Actual: t0.Add(2500 * time.Millisecond)},
		},
		Scrapes: []record.Scrape{{Time: t0.Add(time.Second), Instance: "ledger.2",
			Values: map[string]float64{"platform_rejected_total{reason=shed}": 5, "platform_client_ejected_hosts{dependency=ledger}": 1}}},
		Verdicts: []record.Verdict{
			{Assertion: "p99", Check: "p(99) < 50ms", Metric: "http_req_duration", Observed: 100, Bound: 50, Unit: "ms"},
			{Assertion: "errors", Check: "rate < 0.5", Metric: "http_req_failed", Observed: 0.14, Bound: 0.5, Pass: true},
		},
	}
}

// find returns the series of name whose labels include want.
func find(t *testing.T, ss []Series, name string, want map[string]string) Series {
	t.Helper()
	for _, s := range ss {
		if s.Name != name {
			continue
		}
		match := true
		for k, v := range want {
			match = match && s.Label(k) == v
		}
		if match {
			return s
		}
	}
	t.Fatalf("no series %s%v", name, want)
	return Series{}
}

// values writes a series' points as SECONDS=VALUE, stale as "stale".
func values(s Series) string {
	var parts []string
	for _, p := range s.Points {
		v := strconv.FormatFloat(p.V, 'f', -1, 64)
		if IsStale(p.V) {
			v = "stale"
		}
		parts = append(parts, strconv.FormatFloat(p.T.Sub(t0).Seconds(), 'f', -1, 64)+"="+v)
	}
	return strings.Join(parts, " ")
}

func TestCollect(t *testing.T) {
	ss, err := Collect(synthRun(t), map[string]string{"env": "ci"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"chaosrun_k6_http_req_duration_seconds", map[string]string{"status": "200", "quantile": "0.99"}, "1=0.100031 2=0.100031 3=0.100031 4=0.100031 5=stale"}, // HDR: 100 ms within 3 digits
		{"chaosrun_k6_http_req_duration_seconds", map[string]string{"status": "200", "quantile": "0.5"}, "1=0.002 2=0.002 3=0.002 4=0.002 5=stale"},
		{"chaosrun_k6_http_req_duration_seconds", map[string]string{"status": "503", "quantile": "0.99"}, "2=0.100031 3=stale"},
		{"chaosrun_k6_http_req_duration_seconds_max", map[string]string{"status": "503"}, "2=0.1 3=stale"},
		{"chaosrun_k6_http_reqs_per_second", map[string]string{"status": "503"}, "2=2 3=0 4=0 5=stale"},
		{"chaosrun_k6_http_reqs_total", map[string]string{"status": "200"}, "1=4 2=8 3=12 4=16 5=stale"},
		{"chaosrun_k6_http_reqs_total", map[string]string{"status": "503"}, "2=2 3=2 4=2 5=stale"},
		{"chaosrun_k6_http_req_failed_ratio", map[string]string{"status": "503"}, "2=1 3=stale"},
		{"chaosrun_k6_http_req_failed_nonzero_per_second", map[string]string{"status": "503"}, "2=2 3=0 4=0 5=stale"},
		{"chaosrun_k6_http_req_failed_samples_per_second", map[string]string{"status": "200"}, "1=4 2=4 3=4 4=4 5=stale"},
		{"chaosrun_k6_vus", nil, "1=7 2=7 3=7 4=7 5=stale"},
		{"chaosrun_fault_active", map[string]string{"fault": "slow", "kind": "latency", "target": "a->b"}, "1=0 1.5=1 2=1 2.5=0 3=0 4=0 5=stale"},
		{"chaosrun_target_platform_rejected_total", map[string]string{"reason": "shed", "instance": "ledger.2", "service": "ledger"}, "1=5 5=stale"},
		{"chaosrun_target_platform_client_ejected_hosts", map[string]string{"dependency": "ledger"}, "1=1 5=stale"},
		{"chaosrun_verdict_pass", map[string]string{"assertion": "p99", "unit": "ms"}, "4=0"},
		{"chaosrun_verdict_observed", map[string]string{"assertion": "errors"}, "4=0.14"},
		{"chaosrun_verdict_bound", map[string]string{"assertion": "p99"}, "4=50"},
		{"chaosrun_run_passed", nil, "4=0"},
	} {
		s := find(t, ss, tc.name, tc.labels)
		if got := values(s); got != tc.want {
			t.Errorf("%s%v = %s, want %s", tc.name, tc.labels, got, tc.want)
		}
		for _, want := range []Label{{"job", "chaosrun"}, {"chaosrun_run", "synth@2026-11-22T07:00:00.000Z"}, {"chaosrun_scenario", "synth"}, {"env", "ci"}} {
			if s.Label(want.Name) != want.Value {
				t.Errorf("%s: label %s=%q, want %q", tc.name, want.Name, s.Label(want.Name), want.Value)
			}
		}
	}
	// The k6 tag job would shadow the export's job label: it becomes tag_job.
	if s := find(t, ss, "chaosrun_k6_http_reqs_total", map[string]string{"status": "200"}); s.Label("tag_job") != "mine" {
		t.Errorf("k6 tag job exported as %v", s.Labels)
	}
	// Labels are in name order, every series once.
	seen := map[string]bool{}
	for _, s := range ss {
		for i := 1; i < len(s.Labels); i++ {
			if s.Labels[i-1].Name >= s.Labels[i].Name {
				t.Errorf("%s: labels out of order or repeated: %v", s.Name, s.Labels)
			}
		}
		k := seriesKey(s.Name, s.Labels)
		if seen[k] {
			t.Errorf("series %s%v twice", s.Name, s.Labels)
		}
		seen[k] = true
	}
}

func TestCollectBadHistogram(t *testing.T) {
	r := synthRun(t)
	r.Windows[2].Series[0].Hist = "not a histogram"
	_, err := Collect(r, nil)
	if err == nil || !strings.Contains(err.Error(), "window +2s: http_req_duration") {
		t.Fatalf("err = %v, want the window and series named", err)
	}
}

func TestBatchesKeepTimeOrder(t *testing.T) {
	ss, err := Collect(synthRun(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range ss {
		total += len(s.Points)
	}
	bs := Batches(ss, 2*time.Second)
	if len(bs) != 3 {
		t.Fatalf("%d batches over 5 s of 2 s each, want 3", len(bs))
	}
	last := map[string]time.Time{}
	got := 0
	for i, b := range bs {
		for _, s := range b {
			k := seriesKey(s.Name, s.Labels)
			for _, p := range s.Points {
				if !p.T.After(last[k]) {
					t.Fatalf("batch %d: %s point at %s not after %s", i, s.Name, p.T, last[k])
				}
				last[k] = p.T
				got++
			}
		}
	}
	if got != total {
		t.Fatalf("batches hold %d points, series %d", got, total)
	}
}

func TestSanitizeAndLabelNames(t *testing.T) {
	for _, tc := range []struct{ in, name, label string }{
		{"http_reqs", "http_reqs", "http_reqs"},
		{"my.metric-1", "my_metric_1", "my_metric_1"},
		{"9lives", "_9lives", "_9lives"},
		{"quantile", "quantile", "tag_quantile"},
		{"__name__", "__name__", "tag_name__"},
		{"", "_", "_"},
		{"env", "env", "tag_env"}, // an extra label of that name
	} {
		if got := sanitize(tc.in); got != tc.name {
			t.Errorf("sanitize(%q) = %q, want %q", tc.in, got, tc.name)
		}
		if got := labelName(tc.in, map[string]string{"env": "x"}); got != tc.label {
			t.Errorf("labelName(%q) = %q, want %q", tc.in, got, tc.label)
		}
	}
}

func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{PromRW: "http://127.0.0.1:9090/api/v1/write", Labels: map[string]string{"env": "ci"}}, ""},
		{Config{OTLP: "localhost:4318"}, `otlp URL "localhost:4318"`},
		{Config{GrafanaURL: "ftp://g"}, `grafana URL "ftp://g"`},
		{Config{Labels: map[string]string{"job": "x"}}, `export label "job"`},
		{Config{Labels: map[string]string{"a-b": "x"}}, `export label "a-b"`},
	} {
		err := tc.cfg.Check()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: err %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func FuzzParseScrapeKey(f *testing.F) {
	for _, s := range []string{"a", "a{b=c}", "a{b=c,d=e}_count", "{", "}{", "a{=}", "a{b}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		name, labels := parseScrapeKey(k, nil)
		if name == "" || sanitize(name) != name {
			t.Fatalf("%q: name %q is not a metric name", k, name)
		}
		for _, l := range labels {
			if l.Name == "" || sanitize(l.Name) != l.Name {
				t.Fatalf("%q: label %q is not a label name", k, l.Name)
			}
		}
	})
}
