package stream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// windowAt is a window of n requests at second sec with a histogram of
// values 1..n µs, tagged api A, plus a detail metric.
func windowAt(t *testing.T, t0 time.Time, sec, n int) record.Window {
	t.Helper()
	h := record.NewHist()
	for v := 1; v <= n; v++ {
		h.RecordValue(int64(v))
	}
	enc, err := record.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{"api": "A"}
	return record.Window{Start: t0.Add(time.Duration(sec) * time.Second), Series: []record.Series{
		{Metric: "http_req_blocked", Kind: record.Trend, Count: int64(n), Hist: enc, Tags: tags},
		{Metric: "http_req_duration", Kind: record.Trend, Count: int64(n), Hist: enc, Tags: tags},
		{Metric: "http_reqs", Kind: record.Counter, Count: int64(n), Sum: float64(n), Tags: tags},
	}}
}

func collect(t *testing.T, src record.WindowSource) []record.Window {
	t.Helper()
	var out []record.Window
	if err := src.EachWindow(func(w record.Window) error {
		out = append(out, w)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWindowLogMergesLateEntriesAndShards: a log read back equals merging
// the same windows in memory, however its entries are split between
// entries of one start and between logs.
func TestWindowLogMergesLateEntriesAndShards(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	a, err := CreateWindowLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := CreateWindowLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var all []record.Window
	add := func(l *WindowLog, w record.Window) {
		all = append(all, w)
		if err := l.Append(w); err != nil {
			t.Fatal(err)
		}
	}
	// Out of order, a late second entry for second 1, a second log.
	add(a, windowAt(t, t0, 2, 30))
	add(a, windowAt(t, t0, 1, 10))
	add(a, windowAt(t, t0, 1, 5))
	add(b, windowAt(t, t0, 1, 7))
	add(b, windowAt(t, t0, 3, 1))
	want, err := record.MergeWindows(all)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, WindowLogs{a, b})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %d windows:\n%+v\nwant %d:\n%+v", len(got), got, len(want), want)
	}
	if a.Len() != 2 || b.Len() != 2 {
		t.Errorf("Len = %d, %d; want 2, 2", a.Len(), b.Len())
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("the logs left %d file(s) in their folder; want none (unlinked at creation)", len(ents))
	}
	a.Close()
	if err := a.Append(windowAt(t, t0, 4, 1)); err == nil {
		t.Error("Append after Close: no error")
	}
	if err := a.EachWindow(func(record.Window) error { return nil }); err == nil {
		t.Error("EachWindow after Close: no error")
	}
}

// sendStream writes a hello, one window message per second for secs
// seconds (starting at t0) and an end to the receiver, checking after each
// window how many windows it holds in memory.
func sendStream(t *testing.T, r *Receiver, t0 time.Time, secs int) (maxHeld int) {
	t.Helper()
	c, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bw := bufio.NewWriter(c)
	fmt.Fprintf(bw, `{"type":"hello","version":%d,"extension":"test"}`+"\n", WireVersion)
	for i := range secs {
		w := windowAt(t, t0, i, 100+i)
		b, err := json.Marshal(map[string]any{"type": "window", "start": w.Start.Format(time.RFC3339Nano), "series": w.Series})
		if err != nil {
			t.Fatal(err)
		}
		bw.Write(append(b, '\n'))
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		// Wait until the receiver has taken this window in.
		deadline := time.Now().Add(10 * time.Second)
		for {
			held := r.Windows()
			if len(held) > 0 && !held[len(held)-1].Start.Before(w.Start) {
				maxHeld = max(maxHeld, len(held))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("window %d not received within 10s", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	fmt.Fprintln(bw, `{"type":"end","dropped":0}`)
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if !r.WaitEnded(10 * time.Second) {
		t.Fatal("no end received")
	}
	return maxHeld
}

// TestReceiverLogKeepsMemoryFlat: with a log, the receiver holds only the
// windows not yet settled, however long the stream, and what it logs reads
// back as what a receiver without a log holds; without a log (the A arm)
// it holds every window.
func TestReceiverLogKeepsMemoryFlat(t *testing.T) {
	const secs = 60
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	keep := func(m string) bool { return m != "http_req_blocked" }
	ctx := context.Background()

	plain, err := ListenWith(ctx, Config{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	heldPlain := sendStream(t, plain, t0, secs)
	plain.Close()
	want := plain.Windows()

	wl, err := CreateWindowLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Close()
	logged, err := ListenWith(ctx, Config{Keep: keep, Log: wl})
	if err != nil {
		t.Fatal(err)
	}
	held := sendStream(t, logged, t0, secs)
	logged.Close()

	if heldPlain != secs {
		t.Errorf("without a log: held at most %d windows, want all %d", heldPlain, secs)
	}
	if limit := int(settleLag/time.Second) + 2; held > limit {
		t.Errorf("with a log: held up to %d windows in memory, want at most %d", held, limit)
	}
	if n := len(logged.Windows()); n != 0 {
		t.Errorf("after Close, %d windows still in memory; want all moved to the log", n)
	}
	if sum := logged.Summary(); sum.LogErr != nil {
		t.Fatal(sum.LogErr)
	}
	got := collect(t, wl)
	if len(got) != secs || !reflect.DeepEqual(got, want) {
		t.Fatalf("log holds %d windows, not what the receiver without a log holds (%d)", len(got), len(want))
	}
	for _, s := range got[0].Series {
		if s.Metric == "http_req_blocked" {
			t.Error("Keep did not drop http_req_blocked")
		}
	}
}

// TestReceiverLogFailureKeepsWindows: when the log cannot be written, the
// receiver says so and keeps the windows in memory: nothing is lost.
func TestReceiverLogFailureKeepsWindows(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	wl, err := CreateWindowLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wl.Close()
	r, err := ListenWith(context.Background(), Config{Log: wl})
	if err != nil {
		t.Fatal(err)
	}
	sendStream(t, r, t0, 15)
	r.Close()
	sum := r.Summary()
	if sum.LogErr == nil {
		t.Error("no LogErr after writing to a closed log")
	}
	if len(sum.Windows) != 15 {
		t.Errorf("%d windows kept in memory, want 15", len(sum.Windows))
	}
}

// TestSpilledMergesHeldWindows: windows a receiver still held (its log
// failed) read back merged with the logged ones, as if all were logged.
func TestSpilledMergesHeldWindows(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	wl, err := CreateWindowLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Close()
	logged := []record.Window{windowAt(t, t0, 0, 10), windowAt(t, t0, 1, 20)}
	for _, w := range logged {
		if err := wl.Append(w); err != nil {
			t.Fatal(err)
		}
	}
	held := []record.Window{windowAt(t, t0, 1, 5), windowAt(t, t0, 2, 7)}
	want, err := record.MergeWindows(logged, held)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, Spilled{Logs: WindowLogs{wl}, Held: held})
	if len(got) != 3 || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %d windows, want the 3 of logged and held merged", len(got))
	}
}

// TestKeepDropsBeforeChecking: a series that is not kept is dropped
// without being checked (checking inflates its histogram); a kept one with
// the same bad histogram still makes the line malformed.
func TestKeepDropsBeforeChecking(t *testing.T) {
	line := func(metric string) []byte {
		return []byte(`{"type":"window","start":"2026-01-01T00:00:00Z","series":[{"metric":"` + metric + `","kind":"trend","count":1,"hist":"bad"}]}`)
	}
	st := state{keep: func(m string) bool { return m != "http_req_blocked" }}
	if err := st.handle(line("http_req_blocked")); err != nil {
		t.Errorf("dropped series: %v; want it dropped unchecked", err)
	}
	if err := st.handle(line("http_req_duration")); err == nil {
		t.Error("kept series with a bad histogram: no error")
	}
}

// TestDecodeResultsToLog: a results file decoded into a log reads back as
// the file decoded in memory (its kept metrics; a window that comes late
// merged into its second), nothing is left in memory, and Span gives the
// first and last second; with no log, every window stays in the summary.
func TestDecodeResultsToLog(t *testing.T) {
	const secs = 40
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	keep := func(m string) bool { return m != "http_req_blocked" }
	var file bytes.Buffer
	w, err := NewWriter(&file, Hello{Extension: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var written []record.Window
	for i := range secs {
		written = append(written, windowAt(t, t0, i, 10+i))
	}
	written = append(written, windowAt(t, t0, 3, 5)) // 37 s late: a second entry
	for _, win := range written {
		if err := w.Window(win); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(0); err != nil {
		t.Fatal(err)
	}
	want, err := record.MergeWindows(written)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		want[i].Series = slices.DeleteFunc(want[i].Series, func(s record.Series) bool { return !keep(s.Metric) })
	}

	wl, err := CreateWindowLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Close()
	sum, err := DecodeResultsTo(bytes.NewReader(file.Bytes()), wl, keep)
	if err != nil || !sum.Ended || sum.LogErr != nil {
		t.Fatalf("decode: %v, ended %v, log %v", err, sum.Ended, sum.LogErr)
	}
	if len(sum.Windows) != 0 {
		t.Errorf("%d windows left in memory, want all in the log", len(sum.Windows))
	}
	if got := collect(t, wl); !reflect.DeepEqual(got, want) {
		t.Errorf("the log reads back %d windows, not the file's %d merged and kept", len(got), len(want))
	}
	first, last, ok, err := Spilled{Logs: WindowLogs{wl}}.Span()
	if err != nil || !ok || !first.Equal(t0) || !last.Equal(t0.Add((secs-1)*time.Second)) {
		t.Errorf("Span: %s to %s (%v, %v), want %s to %s", first, last, ok, err, t0, t0.Add((secs-1)*time.Second))
	}

	sum, err = DecodeResultsTo(bytes.NewReader(file.Bytes()), nil, keep)
	if err != nil || !reflect.DeepEqual(sum.Windows, want) {
		t.Errorf("without a log: %d windows (%v), want the file's %d in memory", len(sum.Windows), err, len(want))
	}
	if _, _, ok, _ := (Spilled{}).Span(); ok {
		t.Error("Span of nothing: ok")
	}
}
