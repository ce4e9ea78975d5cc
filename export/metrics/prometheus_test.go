package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/record"
)

// prometheus is a real Prometheus (Debian's package) on loopback with its
// remote-write receiver on and its storage in a temporary folder.
type prometheus struct {
	url string
	cmd *exec.Cmd
}

// startPrometheus starts Prometheus with config (a prometheus.yml body)
// for at most two minutes; the test's cleanup kills it by PID.
func startPrometheus(t *testing.T, config string) *prometheus {
	t.Helper()
	bin := testenv.Tool(t, "prometheus", "prometheus")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--storage.tsdb.retention.time=100y", "--web.listen-address="+addr, "--web.enable-remote-write-receiver")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &prometheus{url: "http://" + addr, cmd: cmd}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		cancel()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	for i := 0; i < 300; i++ {
		resp, err := http.Get(p.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("prometheus on %s not ready within 30 s", addr)
	return nil
}

// promSeries is one series of a query's answer.
type promSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
	Value  [2]any            `json:"value"`
}

// query runs an instant query at time at.
func (p *prometheus) query(t *testing.T, q string, at time.Time) []promSeries {
	t.Helper()
	v := url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
	resp, err := http.Get(p.url + "/api/v1/query?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			Result []promSeries `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v %s %s", q, err, body.Status, body.Error)
	}
	return body.Data.Result
}

func sampleValue(t *testing.T, pair [2]any) (int64, float64) {
	t.Helper()
	ts, _ := pair[0].(float64)
	s, _ := pair[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("sample %v: %v", pair, err)
	}
	return int64(ts*1000 + 0.5), v
}

func readRun(t testing.TB, path string) *record.Run {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r record.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

// windowP99 is run.json's p99 of http_req_duration per window end (ms since
// epoch) and tag set, in seconds: decoded from the record's histograms
// here, apart from the export's own code.
func windowP99(t *testing.T, r *record.Run) map[string]map[int64]float64 {
	t.Helper()
	out := map[string]map[int64]float64{}
	for _, w := range r.Windows {
		for _, s := range w.Series {
			if s.Metric != "http_req_duration" || s.Count == 0 {
				continue
			}
			h, err := record.DecodeHist(s.Hist)
			if err != nil {
				t.Fatal(err)
			}
			k := fmt.Sprintf("%s/%s", s.Tags["api"], s.Tags["status"])
			if out[k] == nil {
				out[k] = map[int64]float64{}
			}
			out[k][w.Start.Add(time.Second).UnixMilli()] = float64(h.ValueAtQuantile(99)) / 1e6
		}
	}
	return out
}

// TestPrometheusReadsBackRun exports a real catalog run (bank-outlier-host
// with outlier detection off, captured by chaosrun run) into a real
// Prometheus and reads back, through its query API, the same p99 per
// window and the same verdicts as the run record.
func TestPrometheusReadsBackRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Prometheus")
	}
	r := readRun(t, "testdata/bank-outlier-host-off.json")
	p := startPrometheus(t, "global:\n  scrape_interval: 1h\n")
	res, err := Export(context.Background(), r, Config{PromRW: p.url + "/api/v1/write", Labels: map[string]string{"env": "test"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exported %s", res)
	run := RunID(r)
	at := r.End.Add(time.Second)

	want := windowP99(t, r)
	got := p.query(t, fmt.Sprintf(`chaosrun_k6_http_req_duration_seconds{quantile="0.99",chaosrun_run=%q,env="test"}[1h]`, run), at)
	if len(got) != len(want) {
		t.Fatalf("prometheus holds %d p99 series, run.json %d", len(got), len(want))
	}
	compared := 0
	for _, s := range got {
		k := s.Metric["api"] + "/" + s.Metric["status"]
		if len(s.Values) != len(want[k]) {
			t.Errorf("%s: %d windows in prometheus, %d in run.json", k, len(s.Values), len(want[k]))
		}
		for _, pair := range s.Values {
			ts, v := sampleValue(t, pair)
			w, ok := want[k][ts]
			if !ok || v != w {
				t.Errorf("%s at %s: p99 %v s in prometheus, %v s in run.json (present %v)", k, time.UnixMilli(ts).UTC().Format(time.RFC3339), v, w, ok)
			}
			compared++
		}
		if s.Metric["api"] == "TransactCheck" && s.Metric["status"] == "200" {
			logP99(t, r, s, want[k])
		}
	}
	if compared < 30 {
		t.Fatalf("only %d windows compared", compared)
	}
	t.Logf("p99 of %d windows in %d series (API, status) equal in prometheus and run.json", compared, len(got))
	checkVerdicts(t, p, r, at)
}

func logP99(t *testing.T, r *record.Run, s promSeries, want map[int64]float64) {
	for i, pair := range s.Values {
		if i%5 != 0 {
			continue
		}
		ts, v := sampleValue(t, pair)
		t.Logf("TransactCheck 200 p99 window ending +%2.0fs: prometheus %.3f ms, run.json %.3f ms", time.UnixMilli(ts).Sub(r.Start).Seconds(), v*1000, want[ts]*1000)
	}
}

func checkVerdicts(t *testing.T, p *prometheus, r *record.Run, at time.Time) {
	t.Helper()
	got := p.query(t, fmt.Sprintf(`chaosrun_verdict_pass{chaosrun_run=%q}`, RunID(r)), at)
	obs := p.query(t, fmt.Sprintf(`chaosrun_verdict_observed{chaosrun_run=%q}`, RunID(r)), at)
	observed := map[string]float64{}
	for _, s := range obs {
		_, observed[s.Metric["assertion"]+"/"+s.Metric["check"]] = sampleValue(t, s.Value)
	}
	if len(got) != len(r.Verdicts) {
		t.Fatalf("%d verdicts in prometheus, %d in run.json", len(got), len(r.Verdicts))
	}
	byKey := map[string]float64{}
	for _, s := range got {
		_, byKey[s.Metric["assertion"]+"/"+s.Metric["check"]] = sampleValue(t, s.Value)
	}
	failed := 0
	for _, v := range r.Verdicts {
		k := v.Assertion + "/" + v.Check
		if byKey[k] != boolValue(v.Pass) || observed[k] != v.Observed {
			t.Errorf("verdict %s: prometheus pass=%v observed=%v, run.json pass=%v observed=%v", k, byKey[k], observed[k], v.Pass, v.Observed)
		}
		if !v.Pass {
			failed++
		}
		t.Logf("verdict %-24s pass=%v observed=%v (prometheus: %v, %v)", v.Assertion, v.Pass, v.Observed, byKey[k], observed[k])
	}
	if failed == 0 {
		t.Error("the record has no failed verdict: the comparison shows nothing about failures")
	}
}

// shifted is r with every instant moved by d (a run that happened then).
func shifted(r *record.Run, d time.Duration) *record.Run {
	c := *r
	c.Start, c.End = r.Start.Add(d), r.End.Add(d)
	c.Windows = make([]record.Window, len(r.Windows))
	for i, w := range r.Windows {
		c.Windows[i] = record.Window{Start: w.Start.Add(d), Series: w.Series}
	}
	c.Faults = append([]record.FaultEvent(nil), r.Faults...)
	for i := range c.Faults {
		c.Faults[i].Actual, c.Faults[i].Scheduled = c.Faults[i].Actual.Add(d), c.Faults[i].Scheduled.Add(d)
	}
	c.Scrapes = append([]record.Scrape(nil), r.Scrapes...)
	for i := range c.Scrapes {
		c.Scrapes[i].Time = c.Scrapes[i].Time.Add(d)
	}
	return &c
}

// TestPrometheusOldSamples shows the limit of remote write into
// Prometheus 2.42: once it holds recent samples, it refuses samples more
// than about an hour older than its newest ("out of bounds"), unless its
// configuration sets storage.tsdb.out_of_order_time_window. An empty
// Prometheus takes a run of any age (TestPrometheusReadsBackRun).
func TestPrometheusOldSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus twice")
	}
	r := readRun(t, "testdata/bank-outlier-host-off.json")
	recent := shifted(r, time.Now().Add(-time.Minute).Sub(r.End))
	old := shifted(r, time.Now().Add(-72*time.Hour).Sub(r.End))
	recent.Scenario = "recent"
	for _, tc := range []struct {
		name, config, wantErr string
	}{
		{"default", "global:\n  scrape_interval: 1h\n", "out of bounds"},
		{"out-of-order window", "global:\n  scrape_interval: 1h\nstorage:\n  tsdb:\n    out_of_order_time_window: 3650d\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPrometheus(t, tc.config)
			if _, err := Export(context.Background(), recent, Config{PromRW: p.url + "/api/v1/write"}); err != nil {
				t.Fatalf("recent run: %v", err)
			}
			_, err := Export(context.Background(), old, Config{PromRW: p.url + "/api/v1/write"})
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("run from %s after one from now: err %v, want %q", old.Start.Format(time.DateOnly), err, tc.wantErr)
			}
			if err != nil {
				t.Logf("as expected: %.200s", err)
				return
			}
			got := p.query(t, fmt.Sprintf(`count(chaosrun_verdict_pass{chaosrun_run=%q})`, RunID(old)), old.End.Add(time.Second))
			if len(got) != 1 {
				t.Fatalf("old run's verdicts not found: %v", got)
			}
		})
	}
}
