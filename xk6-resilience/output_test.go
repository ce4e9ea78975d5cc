package resilience

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.k6.io/k6/metrics"
	"go.k6.io/k6/output"
)

var update = flag.Bool("update", false, "rewrite testdata/stream.golden.jsonl")

// goldenSamples feeds a fixed set of samples of every kind over two seconds.
func goldenSamples(reg *metrics.Registry) []metrics.Sample {
	root := reg.RootTagSet()
	dur := reg.MustNewMetric("http_req_duration", metrics.Trend, metrics.Time)
	reqs := reg.MustNewMetric("http_reqs", metrics.Counter)
	failed := reg.MustNewMetric("http_req_failed", metrics.Rate)
	vus := reg.MustNewMetric("vus", metrics.Gauge)
	get := root.WithTagsFromMap(map[string]string{"scenario": "load", "name": "get", "status": "200", "url": "http://127.0.0.1:9/k/1"})
	get2 := root.WithTagsFromMap(map[string]string{"scenario": "load", "name": "get", "status": "200", "url": "http://127.0.0.1:9/k/2"})
	bad := root.WithTagsFromMap(map[string]string{"scenario": "load", "name": "get", "status": "503"})
	var out []metrics.Sample
	add := func(m *metrics.Metric, tags *metrics.TagSet, ms int, v float64) {
		out = append(out, metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: m, Tags: tags}, Time: t0.Add(time.Duration(ms) * time.Millisecond), Value: v})
	}
	for i, v := range []float64{1.5, 2.25, 40, 0.012} {
		tags := get
		if i%2 == 1 {
			tags = get2
		}
		add(dur, tags, 100*i, v)
		add(reqs, tags, 100*i, 1)
		add(failed, tags, 100*i, 0)
	}
	add(dur, bad, 1200, 5000)
	add(reqs, bad, 1200, 1)
	add(failed, bad, 1200, 1)
	add(vus, root, 0, 3)
	add(vus, root, 1000, 10)
	add(vus, root, 1500, 7)
	return out
}

func TestGoldenStream(t *testing.T) {
	reg := metrics.NewRegistry()
	a := newAggregator(DefaultTags)
	samples := goldenSamples(reg)
	var buf bytes.Buffer
	write := func(b []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
	}
	write(helloLine("v1.8.1", "v0.0.0-golden", "", ""))
	for _, s := range samples {
		a.add(s)
	}
	for _, w := range a.take(time.Time{}) {
		write(windowLine(w))
		w.release()
	}
	// A late sample for the first second: a second window with the same start.
	a.add(metrics.Sample{TimeSeries: samples[0].TimeSeries, Time: t0.Add(900 * time.Millisecond), Value: 100})
	a.add(metrics.Sample{TimeSeries: samples[1].TimeSeries, Time: t0.Add(900 * time.Millisecond), Value: 3})
	for _, w := range a.take(time.Time{}) {
		write(windowLine(w))
	}
	write(endLine(0))

	path := filepath.Join("testdata", "stream.golden.jsonl")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("stream differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, buf.Bytes(), want)
	}
	if strings.Contains(buf.String(), "url") {
		t.Fatal("the url tag leaked into the stream")
	}
}

// readLines parses JSON lines into maps.
func readLines(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v: %s", len(out)+1, err, sc.Bytes())
		}
		out = append(out, m)
	}
	return out
}

// checkStream checks hello first, end last, and that the windows carry n http_reqs.
func checkStream(t *testing.T, lines []map[string]any, n float64) {
	t.Helper()
	if len(lines) < 3 || lines[0]["type"] != "hello" || lines[len(lines)-1]["type"] != "end" {
		t.Fatalf("want hello, windows, end; got %v", lines)
	}
	if lines[0]["extension"] != Version || lines[0]["version"] != float64(WireVersion) {
		t.Fatalf("hello = %v", lines[0])
	}
	var reqs float64
	for _, l := range lines[1 : len(lines)-1] {
		if l["type"] != "window" {
			t.Fatalf("middle line is not a window: %v", l)
		}
		for _, s := range l["series"].([]any) {
			s := s.(map[string]any)
			if s["metric"] == "http_reqs" {
				reqs += s["count"].(float64)
			}
		}
	}
	if reqs != n {
		t.Fatalf("http_reqs count across windows = %v, want %v", reqs, n)
	}
}

func newTestOutput(t *testing.T, arg string) *Output {
	t.Helper()
	o, err := New(output.Params{ConfigArgument: arg, Logger: logrus.New()})
	if err != nil {
		t.Fatal(err)
	}
	return o.(*Output)
}

func TestFileSink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stream.jsonl")
	o := newTestOutput(t, path)
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	samples := goldenSamples(metrics.NewRegistry())
	o.AddMetricSamples([]metrics.SampleContainer{metrics.Samples(samples)})
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkStream(t, readLines(t, data), 5)
}

func TestFileSinkBadPath(t *testing.T) {
	o := newTestOutput(t, filepath.Join(t.TempDir(), "missing", "dir", "x.jsonl"))
	if err := o.Start(); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Start on a bad path: err = %v, want one naming the path", err)
	}
}

func TestTCPSink(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		var b bytes.Buffer
		_, _ = b.ReadFrom(c)
		got <- b.Bytes()
	}()
	o := newTestOutput(t, "tcp://"+ln.Addr().String())
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	o.AddMetricSamples([]metrics.SampleContainer{metrics.Samples(goldenSamples(metrics.NewRegistry()))})
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	checkStream(t, readLines(t, <-got), 5)
}

func TestTCPSinkNoListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := time.Now()
	o := newTestOutput(t, "tcp://"+addr)
	if err := o.Start(); err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Start with nothing listening: err = %v, want one naming %s", err, addr)
	}
	if el := time.Since(start); el > 15*time.Second {
		t.Fatalf("Start took %v to give up", el)
	}
}

// TestTCPSinkReconnect drops the connection under the sink: the sink reconnects
// and starts the new connection with hello.
func TestTCPSinkReconnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	second := make(chan []string, 1)
	go func() {
		c1, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = bufio.NewReader(c1).ReadString('\n') // hello
		c1.Close()
		c2, err := ln.Accept()
		if err != nil {
			return
		}
		defer c2.Close()
		_ = c2.SetReadDeadline(time.Now().Add(20 * time.Second))
		r := bufio.NewReader(c2)
		var lines []string
		for range 2 {
			l, _ := r.ReadString('\n')
			lines = append(lines, l)
		}
		second <- lines
	}()
	s, err := dialTCP(tcpOptions{addr: ln.Addr().String()}, []byte("hello\n"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	s.backoff = 10 * time.Millisecond
	// The first writes after the peer closed may still land in the dead
	// socket's buffer; keep writing until one goes to the new connection.
	for i := 0; i < 50 && s.conn != nil; i++ {
		if err := s.write([]byte("data\n")); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		select {
		case lines := <-second:
			if lines[0] != "hello\n" || lines[1] != "data\n" {
				t.Fatalf("new connection got %q, want hello then data", lines)
			}
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("the sink never reconnected")
}

// TestTCPSinkGivesUp closes the receiver for good: writes fail after a few
// reconnects, and from then on fail at once.
func TestTCPSinkGivesUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	s, err := dialTCP(tcpOptions{addr: ln.Addr().String()}, []byte("hello\n"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	s.backoff = 10 * time.Millisecond
	(<-accepted).Close()
	ln.Close()
	var werr error
	for i := 0; i < 50 && werr == nil; i++ {
		werr = s.write([]byte("data\n"))
		time.Sleep(20 * time.Millisecond)
	}
	if werr == nil || !strings.Contains(werr.Error(), "reconnects") {
		t.Fatalf("writes to a gone receiver: err = %v, want a give-up error", werr)
	}
	start := time.Now()
	if err := s.write([]byte("more\n")); err == nil || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("write after giving up: err = %v after %v, want a fast error", err, time.Since(start))
	}
}

func TestOutputCountsDroppedWhenReceiverGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	o := newTestOutput(t, "tcp://"+ln.Addr().String())
	if err := o.Start(); err != nil {
		t.Fatal(err)
	}
	(<-accepted).Close()
	ln.Close()
	o.sink.(*tcpSink).backoff = 10 * time.Millisecond
	reg := metrics.NewRegistry()
	// Many windows, so that some writes reach the closed peer and fail.
	var samples []metrics.Sample
	for _, s := range goldenSamples(reg) {
		for i := range 40 {
			s.Time = s.Time.Add(time.Duration(i) * time.Second)
			samples = append(samples, s)
		}
	}
	o.AddMetricSamples([]metrics.SampleContainer{metrics.Samples(samples)})
	start := time.Now()
	err = o.Stop()
	if err == nil {
		t.Fatal("Stop: want an error for the lost end message")
	}
	if o.lost == 0 {
		t.Fatal("no samples counted as dropped")
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Fatalf("Stop took %v", el)
	}
}

// TestThresholdTags: the tags a script's thresholds select on are kept
// beside the default ones (a threshold on {type:API} is judged over series
// keyed by type); a malformed key adds nothing.
func TestThresholdTags(t *testing.T) {
	th := map[string]metrics.Thresholds{
		"http_req_duration{type:API}":                metrics.NewThresholds([]string{"avg<200"}),
		"checks{check:ok,scenario:a}":                metrics.NewThresholds([]string{"rate>0.9"}),
		"http_req_duration{ group : ::login,type:x}": metrics.NewThresholds([]string{"p(95)<1"}),
		"bad{nope":  metrics.NewThresholds([]string{"count<1"}),
		"http_reqs": metrics.NewThresholds([]string{"count>1"}),
	}
	got := withThresholdTags(DefaultTags, th)
	want := append(slices.Clone(DefaultTags), "check", "group", "type")
	if !slices.Equal(got, want) {
		t.Errorf("tags %q, want %q", got, want)
	}
	if !slices.Equal(withThresholdTags(DefaultTags, nil), DefaultTags) || len(DefaultTags) != 14 {
		t.Error("no thresholds: the default tags must stay as they are")
	}
}
