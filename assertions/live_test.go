package assertions

import (
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// TestLive: windows of two load parts for the same second add up; the
// newest second is not judged (a part may still be filling it); checks
// without abortOnFail and metrics no check reads are not kept; a check
// whose fault was not applied yet waits.
func TestLive(t *testing.T) {
	defs := []scenario.Assertion{
		{Name: "fails", Metric: "http_reqs", Window: "whole", Checks: []scenario.Check{
			{Threshold: "count < 21", AbortOnFail: true}, {Threshold: "count < 1"}}},
		{Name: "during", Metric: "errors", Window: "during f", Checks: []scenario.Check{{Threshold: "count < 1", AbortOnFail: true}}},
	}
	l := NewLive(defs)
	if l.Len() != 2 {
		t.Fatalf("watching %d checks, want 2", l.Len())
	}
	part := func(sec float64, n float64) record.Window {
		return record.Window{Start: at(sec), Series: []record.Series{
			{Metric: "http_reqs", Kind: record.Counter, Count: int64(n), Sum: n},
			{Metric: "errors", Kind: record.Counter, Count: 1, Sum: 1},
			{Metric: "unread", Kind: record.Counter, Count: 1, Sum: 1},
		}}
	}
	changed := func() bool {
		select {
		case <-l.Changed():
			return true
		default:
			return false
		}
	}
	l.Window(part(0, 10))
	l.Window(part(0, 10))
	if !changed() {
		t.Error("no change for a new second")
	}
	if _, fail := l.Check(t0, nil); fail {
		t.Error("judged the newest second")
	}
	l.Window(part(1, 1))
	l.Window(part(1, 1))
	if !changed() || changed() {
		t.Error("want one change per new second")
	}
	if v, fail := l.Check(t0, nil); fail {
		t.Errorf("20 requests in second 0 fail count < 21: %+v", v)
	}
	l.Window(part(2, 1))
	v, fail := l.Check(t0, nil)
	if !fail || v.Assertion != "fails" || v.Observed != 22 {
		t.Errorf("22 requests in seconds 0-1: %+v, %v", v, fail)
	}
	for _, w := range l.windows {
		for _, s := range w.Series {
			if s.Metric == "unread" {
				t.Fatal("kept a metric no check reads")
			}
		}
	}
	during := NewLive(defs[1:])
	for i := range 4 {
		during.Window(part(float64(i), 1))
	}
	if _, fail := during.Check(t0, nil); fail {
		t.Error("judged a window of a fault not applied yet")
	}
	applied := []record.FaultEvent{{Fault: "f", Action: record.Applied, Actual: at(1)}}
	if v, fail := during.Check(t0, applied); !fail || v.Observed != 2 {
		t.Errorf("during f, applied at 1s: %+v, %v", v, fail)
	}
	delayed := NewLive([]scenario.Assertion{{Name: "d", Metric: "http_reqs", Checks: []scenario.Check{
		{Threshold: "count < 1", AbortOnFail: true, DelayAbortEval: scenario.Duration(3 * time.Second)}}}})
	for i := range 3 {
		delayed.Window(part(float64(i), 1))
	}
	if _, fail := delayed.Check(t0, nil); fail {
		t.Error("aborted before delayAbortEval")
	}
	delayed.Window(part(3, 1))
	if _, fail := delayed.Check(t0, nil); !fail {
		t.Error("no abort once delayAbortEval passed")
	}
}

// TestLiveOnePart: with one load part a second's window is whole when it
// arrives, so the newest second is judged at once; unknown or several
// parts wait for a newer second.
func TestLiveOnePart(t *testing.T) {
	defs := []scenario.Assertion{{Name: "fails", Metric: "http_reqs", Window: "whole", Checks: []scenario.Check{
		{Threshold: "count < 15", AbortOnFail: true}}}}
	for _, tc := range []struct {
		parts int
		fails bool
	}{{1, true}, {0, false}, {2, false}} {
		l := NewLive(defs)
		l.SetParts(tc.parts)
		l.Window(record.Window{Start: at(0), Series: []record.Series{{Metric: "http_reqs", Kind: record.Counter, Count: 10, Sum: 10}}})
		l.Window(record.Window{Start: at(1), Series: []record.Series{{Metric: "http_reqs", Kind: record.Counter, Count: 10, Sum: 10}}})
		v, fail := l.Check(t0, nil)
		if fail != tc.fails || fail && v.Observed != 20 {
			t.Errorf("%d part(s): failed %v (%+v), want %v over both seconds", tc.parts, fail, v, tc.fails)
		}
	}
}
