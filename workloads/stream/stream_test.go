package stream

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

const golden = "../../xk6-resilience/testdata/stream.golden.jsonl"

func find(t *testing.T, w record.Window, metric string, tags map[string]string) record.Series {
	t.Helper()
	for _, s := range w.Series {
		if s.Metric == metric && fmt.Sprint(s.Tags) == fmt.Sprint(tags) {
			return s
		}
	}
	t.Fatalf("window %s has no %s%v", w.Start, metric, tags)
	return record.Series{}
}

// TestDecodeGolden reads the extension's golden stream: both sides of the
// wire must agree.
func TestDecodeGolden(t *testing.T) {
	sum, err := DecodeFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Hello.Version != WireVersion || sum.Hello.K6 != "v1.8.1" || !sum.Ended || sum.Malformed != 0 {
		t.Fatalf("summary header: %+v", sum)
	}
	if len(sum.Windows) != 2 {
		t.Fatalf("got %d windows, want 2 (the late one merged)", len(sum.Windows))
	}
	w0, w1 := sum.Windows[0], sum.Windows[1]
	if want := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC); !w0.Start.Equal(want) || !w1.Start.Equal(want.Add(time.Second)) {
		t.Fatalf("starts %s, %s", w0.Start, w1.Start)
	}
	ok200 := map[string]string{"name": "get", "scenario": "load", "status": "200"}
	d := find(t, w0, "http_req_duration", ok200)
	if d.Kind != record.Trend || d.Count != 5 || math.Abs(d.Sum-143.762) > 1e-9 || d.Min != 0.012 || d.Max != 100 {
		t.Fatalf("merged trend: %+v", d)
	}
	h, err := record.DecodeHist(d.Hist)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 5 || !h.ValuesAreEquivalent(h.Max(), 100_000) || !h.ValuesAreEquivalent(h.Min(), 12) {
		t.Fatalf("merged histogram: count %d, min %d, max %d", h.TotalCount(), h.Min(), h.Max())
	}
	if c := find(t, w0, "http_reqs", ok200); c.Kind != record.Counter || c.Count != 5 || c.Sum != 7 {
		t.Fatalf("merged counter: %+v", c)
	}
	if r := find(t, w1, "http_req_failed", map[string]string{"name": "get", "scenario": "load", "status": "503"}); r.Kind != record.Rate || r.Count != 1 || r.NonZero != 1 {
		t.Fatalf("rate: %+v", r)
	}
	if g := find(t, w1, "vus", nil); g.Kind != record.Gauge || g.Min != 7 || g.Max != 10 || g.Last != 7 {
		t.Fatalf("gauge: %+v", g)
	}
}

func TestDecodeMalformed(t *testing.T) {
	good, err := record.EncodeHist(record.NewHist())
	if err != nil {
		t.Fatal(err)
	}
	hello := `{"type":"hello","version":1,"extension":"x"}`
	tests := []struct {
		name, line, want string
	}{
		{"not json", `{"type":`, "not a JSON message"},
		{"unknown type", `{"type":"bye"}`, `unknown message type "bye"`},
		{"wire version", `{"type":"hello","version":2}`, "wire version 2"},
		{"bad start", `{"type":"window","start":"yesterday","series":[]}`, "not an RFC 3339 time"},
		{"bad kind", `{"type":"window","start":"2026-01-01T00:00:00Z","series":[{"metric":"m","kind":"histogram","count":1}]}`, `kind "histogram"`},
		{"no metric", `{"type":"window","start":"2026-01-01T00:00:00Z","series":[{"kind":"rate","count":1}]}`, "no metric name"},
		{"nonzero over count", `{"type":"window","start":"2026-01-01T00:00:00Z","series":[{"metric":"m","kind":"rate","count":1,"nonzero":2}]}`, "nonzero 2"},
		{"bad hist", `{"type":"window","start":"2026-01-01T00:00:00Z","series":[{"metric":"m","kind":"trend","count":1,"hist":"AAAA"}]}`, "bad histogram"},
		{"hist count mismatch", `{"type":"window","start":"2026-01-01T00:00:00Z","series":[{"metric":"m","kind":"trend","count":3,"hist":"` + good + `"}]}`, "histogram holds 0 values, count is 3"},
		{"negative dropped", `{"type":"end","dropped":-1}`, "negative"},
		{"blank", `   `, "empty line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := hello + "\n" + tt.line + "\n" + `{"type":"end","dropped":0}` + "\n"
			sum, err := Decode(strings.NewReader(in))
			if err == nil || !strings.Contains(err.Error(), "line 2: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v; want line 2 and %q", err, tt.want)
			}
			if sum.Malformed != 1 || !sum.Ended {
				t.Fatalf("malformed %d, ended %v; want 1 and the end still read", sum.Malformed, sum.Ended)
			}
		})
	}
}

func TestDecodeLongLine(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"type":"hello","version":1}` + "\n")
	b.WriteString(`{"type":"window","start":"`)
	b.Write(bytes.Repeat([]byte("x"), MaxLine+10))
	b.WriteString("\"}\n")
	b.WriteString(`{"type":"end"}`) // no final newline
	sum, err := Decode(&b)
	if err == nil || !strings.Contains(err.Error(), "line 2: longer than") {
		t.Fatalf("err = %v", err)
	}
	if sum.Malformed != 1 || !sum.Ended {
		t.Fatalf("malformed %d, ended %v", sum.Malformed, sum.Ended)
	}
}

// TestDecodeResultsStopsAtLongLine: a results file's over-long line ends
// its reading (a connection's is skipped: TestDecodeLongLine); what came
// before is kept and the error says where and why. An endless line
// (/dev/zero) is refused at once, in bounded memory.
func TestDecodeResultsStopsAtLongLine(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"type":"hello","version":1}` + "\n")
	b.WriteString(`{"type":"window","start":"2026-01-01T00:00:00Z","series":[{"metric":"http_reqs","kind":"counter","count":1,"sum":1}]}` + "\n")
	b.Write(bytes.Repeat([]byte("x"), MaxLine+10))
	b.WriteString("\n" + `{"type":"end"}` + "\n")
	sum, err := DecodeResults(&b)
	if err == nil || !strings.Contains(err.Error(), "line 3: longer than 16777216 bytes: reading stopped there") {
		t.Fatalf("err = %v", err)
	}
	if sum.Malformed != 1 || sum.Ended || len(sum.Windows) != 1 || sum.Hello.Version != 1 {
		t.Fatalf("malformed %d, ended %v, %d windows: want the hello and the window before the long line, and no end", sum.Malformed, sum.Ended, len(sum.Windows))
	}
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer zero.Close()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	sum, err = DecodeResults(zero)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if err == nil || sum.Hello.Version != 0 || time.Since(t0) > 2*time.Second || after.TotalAlloc-before.TotalAlloc > 3*MaxLine {
		t.Errorf("/dev/zero: %v after %s, %d MiB allocated", err, time.Since(t0), (after.TotalAlloc-before.TotalAlloc)>>20)
	}
}

func TestMergeSameStart(t *testing.T) {
	mk := func(vals ...float64) string {
		h := record.NewHist()
		var sum float64
		for _, v := range vals {
			sum += v
			if err := h.RecordValue(int64(v * 1000)); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := record.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`{"metric":"lat","kind":"trend","tags":{"api":"a"},"count":%d,"sum":%g,"min":%g,"max":%g,"hist":%q}`,
			len(vals), sum, vals[0], vals[len(vals)-1], enc)
	}
	in := `{"type":"window","start":"2026-01-01T00:00:01Z","series":[` + mk(1, 2, 3) + `,{"metric":"g","kind":"gauge","count":1,"min":5,"max":5,"last":5}]}
{"type":"window","start":"2026-01-01T00:00:00Z","series":[` + mk(9) + `]}
{"type":"window","start":"2026-01-01T00:00:01Z","series":[` + mk(0.5, 10) + `,{"metric":"g","kind":"gauge","count":1,"min":2,"max":2,"last":2}]}
`
	sum, err := Decode(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Windows) != 2 || sum.Windows[0].Start.Second() != 0 || sum.Ended {
		t.Fatalf("windows %+v ended %v", sum.Windows, sum.Ended)
	}
	s := find(t, sum.Windows[1], "lat", map[string]string{"api": "a"})
	if s.Count != 5 || s.Sum != 16.5 || s.Min != 0.5 || s.Max != 10 {
		t.Fatalf("merged: %+v", s)
	}
	h, err := record.DecodeHist(s.Hist)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 5 || h.ValueAtQuantile(50) != 2000 {
		t.Fatalf("merged hist: total %d p50 %d", h.TotalCount(), h.ValueAtQuantile(50))
	}
	if g := find(t, sum.Windows[1], "g", nil); g.Min != 2 || g.Max != 5 || g.Last != 2 || g.Count != 2 {
		t.Fatalf("merged gauge: %+v", g)
	}
}

func TestReceiver(t *testing.T) {
	ctx := context.Background()
	r, err := Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var mu sync.Mutex
	var live []time.Time
	r.OnWindow(func(w record.Window) {
		mu.Lock()
		live = append(live, w.Start)
		mu.Unlock()
	})
	send := func(lines string) {
		c, err := net.Dial("tcp", r.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(lines)); err != nil {
			t.Fatal(err)
		}
	}
	w := func(sec, n int) string {
		return fmt.Sprintf(`{"type":"window","start":"2026-01-01T00:00:%02dZ","series":[{"metric":"http_reqs","kind":"counter","count":%d,"sum":%d}]}`+"\n", sec, n, n)
	}
	// A first connection that breaks off mid-line, then a reconnect.
	send(`{"type":"hello","version":1,"extension":"v0"}` + "\n" + w(1, 3) + w(0, 2) + `{"type":"wind`)
	// An output reconnects once its connection broke: the receiver has
	// read the first one to its end before the second comes.
	for i := 0; i < 100 && r.Summary().Malformed == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	send(`{"type":"hello","version":1,"extension":"v0"}` + "\n" + w(1, 4) + `{"type":"end","dropped":7}` + "\n")
	for i := 0; i < 100 && !r.Ended(); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	sum := r.Summary()
	if !sum.Ended || sum.Dropped != 7 || sum.Malformed != 1 {
		t.Fatalf("ended %v dropped %d malformed %d (%v)", sum.Ended, sum.Dropped, sum.Malformed, sum.Errors)
	}
	if !strings.Contains(sum.Errors[0].Error(), "connection 1 line 4") {
		t.Fatalf("error does not say where: %v", sum.Errors[0])
	}
	got := map[int]int64{}
	for _, win := range r.Windows() {
		got[win.Start.Second()] = win.Series[0].Count
	}
	if fmt.Sprint(got) != "map[0:2 1:7]" {
		t.Fatalf("windows = %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(live) != 3 {
		t.Fatalf("OnWindow saw %d windows, want 3", len(live))
	}
}

func TestReceiverNoEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Listen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte(`{"type":"hello","version":1}` + "\n"))
	// A connection left open: Close cuts it after its grace.
	start := time.Now()
	cancel()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("Close took %v", el)
	}
	if r.Ended() {
		t.Fatal("Ended without an end message")
	}
	if _, err := net.DialTimeout("tcp", r.Addr(), time.Second); err == nil {
		t.Fatal("still accepting after Close")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"type":"hello","version":1}` + "\n" + `{"type":"end","dropped":0}`))
	f.Add([]byte(`{"type":"hello","version":1,"token":"t0k"}` + "\n" + `{"type":"end","dropped":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sum, err := Decode(bytes.NewReader(data))
		if sum.Malformed > 0 && err == nil {
			t.Fatalf("%d malformed lines but no error", sum.Malformed)
		}
		for _, w := range sum.Windows {
			for _, s := range w.Series {
				if s.Hist != "" {
					if _, err := record.DecodeHist(s.Hist); err != nil {
						t.Fatalf("accepted a window whose histogram does not decode: %v", err)
					}
				}
			}
		}
	})
}
