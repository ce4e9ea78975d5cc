package httpstage

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkStageOverhead measures what a stage whose toxics match nothing
// adds per request: each iteration sends one request straight to a real
// HTTP server and one through the stage, both on keep-alive connections,
// and the medians are reported side by side (same run, same noise).
func BenchmarkStageOverhead(b *testing.B) {
	up := startUpstream(b)
	s := startStage(b, up.Listener.Addr().String(),
		Toxic{Name: "miss-error", Type: KindError, Attributes: Attributes{Path: "/never/*"}},
		Toxic{Name: "miss-latency", Type: KindLatency, Attributes: Attributes{Latency: 1000, Header: map[string]string{"X-Caller": "nobody"}}})
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(base string) time.Duration {
		t0 := time.Now()
		resp, err := client.Post(base+"/transact/cash", "application/json", strings.NewReader(`{"amount":1}`))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(t0)
	}
	direct, staged := up.URL, "http://"+s.Addr()
	get(direct)
	get(staged)
	var d, st []time.Duration
	for b.Loop() {
		d = append(d, get(direct))
		st = append(st, get(staged))
	}
	slices.Sort(d)
	slices.Sort(st)
	dm, sm := d[len(d)/2], st[len(st)/2]
	b.ReportMetric(float64(dm.Nanoseconds())/1e3, "direct-p50-µs")
	b.ReportMetric(float64(sm.Nanoseconds())/1e3, "stage-p50-µs")
	b.ReportMetric(float64((sm-dm).Nanoseconds())/1e3, "added-p50-µs")
}
