package native

import (
	"bytes"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/models/client"
	"github.com/chaosrun/chaosrun/models/keys"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// memOut keeps what an engine writes.
type memOut struct {
	windows []record.Window
	ended   bool
	lost    int64
}

func (m *memOut) Window(w record.Window) error { m.windows = append(m.windows, w); return nil }
func (m *memOut) End(lost int64) error         { m.ended, m.lost = true, lost; return nil }

// testLane is a lane for collector tests: one stream with a client model,
// a checked status and a custom metric.
func testLanes(t *testing.T) []*lane {
	t.Helper()
	st := &Stream{Name: "s", Targets: []string{"http://127.0.0.1:1"}, Method: "GET", Path: "/", Timeout: time.Second,
		Arrival: arrival.Constant(1, 0, time.Second), Expect: []int{200}, Tags: map[string]string{"api": "A"},
		Client:  &Client{Config: client.Defaults(client.ModelSmart), Headers: client.DefaultHeaderNames},
		Metrics: []Metric{{Name: "fast", Kind: "rate"}}}
	l, err := compileLane(st, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return []*lane{l}
}

// syntheticEvents are n arrivals' events over 3 seconds, with log-normal
// durations, some failures, retries and drops.
func syntheticEvents(n int) ([]event, []float64) {
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	var evs []event
	var durs []float64
	for i := range n {
		t := base + int64(i)*int64(3*time.Second)/int64(n)
		if i%97 == 0 {
			evs = append(evs, event{kind: evDrop, t: t})
			continue
		}
		d := int64(math.Exp(r.NormFloat64()*1.2+math.Log(2e6))) + 1000
		status := uint16(200)
		if i%13 == 0 {
			status = 503
		}
		evs = append(evs, event{kind: evAttempt, t: t + d, dur: d, status: status})
		durs = append(durs, float64(d)/1e6)
		evs = append(evs, event{kind: evRequest, t: t + d, dur: d, status: status, attempts: 1 + uint16(i%3), retries: uint16(i % 3),
			flags: flag(status == 200, flOK|flCheck|flGoodput) | flag(status != 200, flGaveUp), marks: uint16(i % 2)})
	}
	return evs, durs
}

func collectAll(lanes []*lane, evs []event) *memOut {
	out := &memOut{}
	c := newCollector(lanes, out)
	for i := range evs {
		c.fold(&evs[i])
	}
	c.flush(0)
	_ = out.End(c.lost)
	return out
}

// encodeDecode writes windows as a stream and reads them back.
func encodeDecode(t *testing.T, outs ...*memOut) stream.Summary {
	t.Helper()
	var all bytes.Buffer
	for _, o := range outs {
		var buf bytes.Buffer
		w, err := stream.NewWriter(&buf, Hello())
		if err != nil {
			t.Fatal(err)
		}
		for _, win := range o.windows {
			if err := w.Window(win); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.End(o.lost); err != nil {
			t.Fatal(err)
		}
		all.Write(buf.Bytes())
	}
	sum, err := stream.Decode(&all)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestWireRoundTrip checks that the stream decoder reads back exactly the
// windows the collector made.
func TestWireRoundTrip(t *testing.T) {
	lanes := testLanes(t)
	evs, _ := syntheticEvents(3000)
	out := collectAll(lanes, evs)
	sum := encodeDecode(t, out)
	if !sum.Ended || sum.Hello.Extension != Version || sum.Dropped != 0 {
		t.Fatalf("summary: ended %v hello %+v dropped %d", sum.Ended, sum.Hello, sum.Dropped)
	}
	if !reflect.DeepEqual(sum.Windows, out.windows) {
		t.Fatalf("decoded windows differ from the written ones:\n%v\n%v", sum.Windows, out.windows)
	}
	names := map[string]bool{}
	for _, w := range out.windows {
		for _, s := range w.Series {
			names[s.Metric+" "+string(s.Kind)] = true
		}
	}
	for _, want := range []string{"http_reqs counter", "http_req_duration trend", "http_req_failed rate", "checks rate", "iterations counter",
		"dropped_iterations counter", "resilience_requests counter", "resilience_attempts counter", "resilience_retries counter",
		"resilience_amplification trend", "resilience_goodput rate", "resilience_giveups counter", "fast rate"} {
		if !names[want] {
			t.Errorf("no %s series", want)
		}
	}
}

// TestShardsMergeExactly splits one run's events among three collectors
// by arrival (as shards split arrivals): the merged stream equals the one
// collector's, histograms included.
func TestShardsMergeExactly(t *testing.T) {
	lanes := testLanes(t)
	evs, _ := syntheticEvents(6000)
	whole := encodeDecode(t, collectAll(lanes, evs))
	parts := make([][]event, 3)
	arrivalOf := 0
	for _, e := range evs {
		parts[arrivalOf%3] = append(parts[arrivalOf%3], e)
		if e.kind != evAttempt {
			arrivalOf++
		}
	}
	merged := encodeDecode(t, collectAll(lanes, parts[0]), collectAll(lanes, parts[1]), collectAll(lanes, parts[2]))
	if len(merged.Windows) != len(whole.Windows) {
		t.Fatalf("%d windows merged, %d whole", len(merged.Windows), len(whole.Windows))
	}
	for i := range whole.Windows {
		a, b := whole.Windows[i], merged.Windows[i]
		if len(a.Series) != len(b.Series) {
			t.Fatalf("window %s: %d series whole, %d merged", a.Start, len(a.Series), len(b.Series))
		}
		for j := range a.Series {
			x, y := a.Series[j], b.Series[j]
			// Sums of float milliseconds differ in their last bits with the
			// order of addition; everything else is exact.
			if math.Abs(x.Sum-y.Sum) > 1e-9*math.Abs(x.Sum) {
				t.Errorf("window %s %s: sum %v whole, %v merged", a.Start, x.Metric, x.Sum, y.Sum)
			}
			x.Sum, y.Sum = 0, 0
			if !reflect.DeepEqual(x, y) {
				t.Errorf("window %s series %d:\nwhole  %+v\nmerged %+v", a.Start, j, x, y)
			}
		}
	}
}

// TestQuantilesExact checks the written histograms' quantiles against the
// exact quantiles of the durations: within 1% (HDR with 3 digits: 0.1%).
func TestQuantilesExact(t *testing.T) {
	evs, durs := syntheticEvents(100_000)
	sum := encodeDecode(t, collectAll(testLanes(t), evs))
	slices.Sort(durs)
	for _, q := range []float64{50, 90, 99, 99.9, 100} {
		// The rank HdrHistogram's ValueAtQuantile reads.
		rank := min(max(int(q/100*float64(len(durs))+0.5), 1), len(durs))
		exact := durs[rank-1]
		got := quantile(t, sum, "http_req_duration", nil, q)
		if rel := math.Abs(got-exact) / exact; rel > 0.01 {
			t.Errorf("p(%v) = %.4f ms, exact %.4f ms: off by %.2f%%", q, got, exact, rel*100)
		}
	}
}

// TestShardedRunsAddUp runs a workload whole and as three shards against
// a transport whose answers depend only on the request: every series'
// totals agree exactly, and so do the keys drawn.
func TestShardedRunsAddUp(t *testing.T) {
	status := func(r *http.Request) int {
		if fnv32(r.URL.Path)%5 == 0 {
			return 500
		}
		return 200
	}
	spec := Spec{Seed: 9, Streams: []Stream{{Name: "z", Targets: []string{"http://a.test", "http://b.test"}, Method: "POST", Path: "/k/{key}",
		Body: "{seq}", Timeout: time.Second, Arrival: arrival.Profile{StartRate: 100, Segments: []arrival.Segment{{Rate: 900, Duration: time.Second}, {Rate: 300, Duration: 500 * time.Millisecond}}},
		Keys:   map[string]Keys{"key": {Config: keys.Config{Kind: keys.Zipf, N: 1000, S: 1.1, HotKeys: 10, Seed: 3}}},
		Tags:   map[string]string{"key_class": "{key.class}"},
		Expect: []int{200}}}}
	var mu sync.Mutex
	run := func(sh Shard, paths *[]string) *memOut {
		out := &memOut{}
		ft := &fakeTransport{status: func(r *http.Request) int {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			*paths = append(*paths, r.URL.Host+r.URL.Path+" "+string(b))
			mu.Unlock()
			return status(r)
		}}
		if _, err := RunWith(context.Background(), spec, sh, out, Options{Transport: ft}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var onePaths, shardPaths []string
	whole := totals(encodeDecode(t, run(Shard{}, &onePaths)))
	var outs []*memOut
	for i := range 3 {
		outs = append(outs, run(Shard{Index: i, Count: 3}, &shardPaths))
	}
	split := totals(encodeDecode(t, outs...))
	if !reflect.DeepEqual(whole, split) {
		t.Errorf("totals differ:\nwhole %v\nshards %v", whole, split)
	}
	slices.Sort(onePaths)
	slices.Sort(shardPaths)
	if !slices.Equal(onePaths, shardPaths) || len(onePaths) != 800 {
		t.Errorf("%d requests whole, %d sharded; the sharded ones differ: %v", len(onePaths), len(shardPaths), !slices.Equal(onePaths, shardPaths))
	}
}

// totals sums every series over the whole run: count, sum, nonzero and
// histogram count, keyed by metric and tags.
func totals(sum stream.Summary) map[string][3]float64 {
	out := map[string][3]float64{}
	for _, w := range sum.Windows {
		for _, s := range w.Series {
			k := s.Metric + tagString(s.Tags)
			k = strings.ReplaceAll(k, "\x00", ",")
			v := out[k]
			v[0] += float64(s.Count)
			v[1] += s.Sum
			v[2] += float64(s.NonZero)
			if s.Kind == record.Trend {
				v[1] = 0 // durations differ from run to run; counts do not
			}
			out[k] = v
		}
	}
	return out
}
