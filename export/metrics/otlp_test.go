package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an in-process OTLP/HTTP metrics receiver: it decodes each
// request's protobuf body and keeps every data point.
type otlpReceiver struct {
	mu       sync.Mutex
	requests int
	service  string
	// points by metric name: attributes joined, time, value, start time.
	points map[string][]otlpPoint
	sums   map[string]bool // metric names sent as monotonic cumulative sums
}

type otlpPoint struct {
	attrs       map[string]string
	t, start    time.Time
	value       float64
	metricsUnit string
}

func (rc *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/metrics application/x-protobuf", http.StatusBadRequest)
		return
	}
	b, err := io.ReadAll(r.Body)
	var req colmetrics.ExportMetricsServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.requests++
	for _, rm := range req.ResourceMetrics {
		for _, a := range rm.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				rc.service = a.GetValue().GetStringValue()
			}
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				dps := m.GetGauge().GetDataPoints()
				if s := m.GetSum(); s != nil {
					dps = s.GetDataPoints()
					rc.sums[m.Name] = s.IsMonotonic && s.AggregationTemporality == 2
				}
				for _, dp := range dps {
					attrs := map[string]string{}
					for _, a := range dp.Attributes {
						attrs[a.Key] = a.GetValue().GetStringValue()
					}
					rc.points[m.Name] = append(rc.points[m.Name], otlpPoint{attrs: attrs,
						t: time.Unix(0, int64(dp.TimeUnixNano)).UTC(), start: time.Unix(0, int64(dp.StartTimeUnixNano)).UTC(),
						value: dp.GetAsDouble(), metricsUnit: m.Unit})
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
	w.Write(out)
}

// TestOTLPExport sends a run through the OpenTelemetry SDK's OTLP/HTTP
// exporter to an in-process receiver and finds every point of Collect
// there, at the run's own times, but the staleness markers.
func TestOTLPExport(t *testing.T) {
	rc := &otlpReceiver{points: map[string][]otlpPoint{}, sums: map[string]bool{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	r := synthRun(t)
	res, err := Export(context.Background(), r, Config{OTLP: srv.URL + "/v1/metrics", Span: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 3 || rc.requests != 3 {
		t.Errorf("%d requests sent, %d received; want 3 (5 s of run in 2 s spans)", res.Requests, rc.requests)
	}
	if rc.service != "chaosrun" {
		t.Errorf("resource service.name %q, want chaosrun", rc.service)
	}
	ss, _ := Collect(r, nil)
	want := 0
	for _, s := range ss {
		for _, p := range s.Points {
			if IsStale(p.V) {
				continue
			}
			want++
			if !hasPoint(rc.points[s.Name], s, p) {
				t.Errorf("%s%v at %s = %v not received", s.Name, s.Labels, p.T, p.V)
			}
		}
	}
	got := 0
	for _, ps := range rc.points {
		got += len(ps)
	}
	if got != want {
		t.Errorf("received %d points, sent %d", got, want)
	}
	if !rc.sums["chaosrun_k6_http_reqs_total"] || rc.sums["chaosrun_k6_http_reqs_per_second"] {
		t.Errorf("kinds: %v; want only _total series as cumulative monotonic sums", rc.sums)
	}
	p99 := rc.points["chaosrun_k6_http_req_duration_seconds"]
	if len(p99) == 0 || p99[0].metricsUnit != "s" {
		t.Errorf("latency points %v: want unit s", p99)
	}
}

func hasPoint(ps []otlpPoint, s Series, p Point) bool {
	for _, q := range ps {
		if !q.t.Equal(p.T) || q.value != p.V || len(q.attrs) != len(s.Labels)-1 {
			continue
		}
		if s.Kind == Counter && !q.start.Equal(t0) {
			continue
		}
		same := true
		for _, l := range s.Labels {
			if l.Name != LabelJob && q.attrs[l.Name] != l.Value {
				same = false
			}
		}
		if same {
			return true
		}
	}
	return false
}

func TestOTLPReceiverDown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer srv.Close()
	_, err := Export(context.Background(), synthRun(t), Config{OTLP: srv.URL + "/v1/metrics"})
	if err == nil {
		t.Fatal("an OTLP receiver answering 400 gave no error")
	}
}
