package stream

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// encodeWindows are two windows as a load engine writes them.
func encodeWindows(t *testing.T) []record.Window {
	t.Helper()
	h := record.NewHist()
	for _, v := range []int64{1200, 3400, 99_000} {
		_ = h.RecordValue(v)
	}
	enc, err := record.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	tags := map[string]string{"scenario": "s", "status": "200"}
	return []record.Window{
		{Start: start, Series: []record.Series{
			{Metric: "http_req_duration", Kind: record.Trend, Tags: tags, Count: 3, Sum: 103.6, Min: 1.2, Max: 99, Hist: enc},
			{Metric: "http_reqs", Kind: record.Counter, Tags: tags, Count: 3, Sum: 3},
		}},
		{Start: start.Add(time.Second), Series: []record.Series{
			{Metric: "http_req_failed", Kind: record.Rate, Tags: tags, Count: 4, NonZero: 1},
		}},
	}
}

// writeAll writes windows and the end line.
func writeAll(t *testing.T, w *Writer, wins []record.Window, dropped int64) {
	t.Helper()
	for _, win := range wins {
		if err := w.Window(win); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(dropped); err != nil {
		t.Fatal(err)
	}
}

// TestWriterRoundTrip writes windows with the Writer and reads them with
// the decoder: the same windows, hello and end.
func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Hello{Extension: "native test"})
	if err != nil {
		t.Fatal(err)
	}
	want := encodeWindows(t)
	writeAll(t, w, want, 7)
	if first, _, _ := strings.Cut(buf.String(), "\n"); strings.Contains(first, "token") {
		t.Errorf("a file's hello carries a token: %s", first)
	}
	sum, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Hello.Extension != "native test" || !sum.Ended || sum.Dropped != 7 {
		t.Errorf("summary %+v", sum)
	}
	if !reflect.DeepEqual(sum.Windows, want) {
		t.Errorf("windows:\n%+v\nwant\n%+v", sum.Windows, want)
	}
}

// TestDialWithToken streams to a receiver that wants a token: the right one
// is welcomed and its windows arrive; a wrong one is refused at once.
func TestDialWithToken(t *testing.T) {
	ctx := context.Background()
	r, err := ListenWith(ctx, Config{Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := Dial(ctx, DialConfig{Addr: r.Addr(), Token: "wrong", Wait: 2 * time.Second}, Hello{Extension: "x"}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("wrong token: err = %v, want refused", err)
	}
	w, err := Dial(ctx, DialConfig{Addr: r.Addr(), Token: "s3cret"}, Hello{Extension: "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := encodeWindows(t)
	writeAll(t, w, want, 0)
	if !r.WaitEnded(5 * time.Second) {
		t.Fatal("no end arrived")
	}
	if got := r.Windows(); !reflect.DeepEqual(got, want) {
		t.Errorf("received:\n%+v\nwant\n%+v", got, want)
	}
	if _, err := Dial(ctx, DialConfig{Addr: "127.0.0.1:1", Wait: 300 * time.Millisecond}, Hello{}); err == nil {
		t.Error("dial to a closed port: want an error")
	}
}
