package report

import (
	"fmt"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/record"
)

// countedWindows is a run's windows read as from a window log, counting
// how often they are read.
type countedWindows struct {
	ws    []record.Window
	reads *int
}

func (c countedWindows) EachWindow(f func(record.Window) error) error {
	*c.reads++
	for _, w := range c.ws {
		if err := f(w); err != nil {
			return err
		}
	}
	return nil
}

// TestKeyFiguresInFewReadings: key figures are each figure's seconds
// aggregated (cellsIn, aggregate), for 2 APIs and for 13 (39 figures,
// more than one reading takes), and the windows are read once for the
// APIs and once per figuresPerPass figures (before: twice per figure, 79
// readings of a 13-API run's window log).
func TestKeyFiguresInFewReadings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		apis  int
		reads int
	}{{"2 APIs", 2, 2}, {"13 APIs", 13, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			var apis []synthAPI
			for i := range tc.apis {
				apis = append(apis, synthAPI{name: fmt.Sprintf("api%02d", i), rate: 20 + i, latency: lognormal(2 + float64(i)), fails: failDuring(0.1)})
			}
			run := synthRun(t, 1, apis, nil)
			reads := 0
			counted := *run
			counted.Windows, counted.Source = nil, countedWindows{run.Windows, &reads}
			got, err := KeyFigures(&counted)
			if err != nil {
				t.Fatal(err)
			}
			want := keyFiguresByCells(t, run)
			if len(got) != len(want) || len(got) != 3*tc.apis {
				t.Fatalf("%d key figures, want %d (3 phases of %d APIs)", len(got), len(want), tc.apis)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("figure %d: %+v, want %+v", i, got[i], want[i])
				}
			}
			if reads != tc.reads {
				t.Errorf("the windows were read %d times, want %d", reads, tc.reads)
			}
		})
	}
}

// keyFiguresByCells computes the key figures one at a time from their
// seconds, as a diff's figures are.
func keyFiguresByCells(t *testing.T, r *record.Run) []KeyFigure {
	t.Helper()
	p50 := stat{Agg: record.Agg{Func: record.AggMed}}
	p99 := stat{Agg: record.Agg{Func: record.AggP, P: 99}}
	rate := stat{Agg: record.Agg{Func: record.AggRate}}
	names, err := apis(r)
	if err != nil {
		t.Fatal(err)
	}
	var out []KeyFigure
	for _, api := range sortedKeys(names) {
		dur, _ := assertions.ParseMetric(names[api] + "{api:" + api + "}")
		failed, _ := assertions.ParseMetric("http_req_failed{api:" + api + "}")
		for _, ph := range phases(r) {
			from, to, desc, ok := ph.resolve(r)
			if !ok {
				continue
			}
			dc, err1 := cellsIn(r, dur, from, to, p50)
			fc, err2 := cellsIn(r, failed, from, to, rate)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			k := KeyFigure{API: api, Phase: desc}
			k.P50, _ = aggregate(dc, p50)
			k.P99, _ = aggregate(dc, p99)
			k.Rate, _ = aggregate(dc, rate)
			k.Failed, _ = aggregate(fc, rate)
			for i := range dc {
				k.Requests += dc[i].Samples()
			}
			out = append(out, k)
		}
	}
	return out
}

// TestKeyFiguresOfGRPCCalls: an API whose calls are gRPC gets its rate and
// latency from grpc_req_duration and its failures from the calls whose
// status is not OK ("0").
func TestKeyFiguresOfGRPCCalls(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := &record.Run{Start: start, End: start.Add(10 * time.Second)}
	hist := func(n int) string {
		h := record.NewHist()
		h.RecordValues(1000, int64(n)) // 1 ms each
		s, err := record.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i := range 10 {
		ok := record.Series{Metric: "grpc_req_duration", Kind: record.Trend, Tags: map[string]string{"api": "SayHello", "status": "0"}, Count: 8, Sum: 8, Hist: hist(8)}
		bad := record.Series{Metric: "grpc_req_duration", Kind: record.Trend, Tags: map[string]string{"api": "SayHello", "status": "14"}, Count: 2, Sum: 2, Hist: hist(2)}
		r.Windows = append(r.Windows, record.Window{Start: start.Add(time.Duration(i) * time.Second), Series: []record.Series{ok, bad}})
	}
	kf, err := KeyFigures(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(kf) != 1 || kf[0].API != "SayHello" || kf[0].Requests != 100 || kf[0].Rate != 10 || kf[0].Failed != 0.2 {
		t.Errorf("key figures %+v, want SayHello: 100 calls, 10/s, 20%% failed", kf)
	}
}
