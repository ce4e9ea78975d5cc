package stream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/wire"
	"github.com/chaosrun/chaosrun/record"
)

// TestSeriesLayout: the stream's series and the record's have the same
// fields, in the same order, under the same JSON tags, of the same types
// (Kind aside, a string in both): fromWire and toWire copy all of them,
// and both encode to the same bytes.
func TestSeriesLayout(t *testing.T) {
	rt, wt := reflect.TypeFor[record.Series](), reflect.TypeFor[wire.Series]()
	if rt.NumField() != wt.NumField() {
		t.Fatalf("record.Series has %d fields, wire.Series %d", rt.NumField(), wt.NumField())
	}
	for i := range rt.NumField() {
		r, w := rt.Field(i), wt.Field(i)
		same := r.Type == w.Type || r.Type.Kind() == reflect.String && w.Type.Kind() == reflect.String
		if r.Name != w.Name || r.Tag != w.Tag || !same {
			t.Errorf("field %d: record.Series has %s %s `%s`, wire.Series %s %s `%s`", i, r.Name, r.Type, r.Tag, w.Name, w.Type, w.Tag)
		}
	}
}

// windowLines are window lines as the extension writes them: the golden
// stream's, and edge cases of the series layout.
func windowLines(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(golden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, MaxLine)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `{"type":"window"`) {
			out = append(out, sc.Text())
		}
	}
	if err := sc.Err(); err != nil || len(out) == 0 {
		t.Fatalf("%s: %d window lines, %v", golden, len(out), err)
	}
	return append(out,
		// Every field set.
		`{"type":"window","start":"2026-01-02T03:04:05Z","series":[{"metric":"m","kind":"gauge","tags":{"a":"1","b":""},"count":9,"sum":1.5,"min":-2,"max":1e+21,"last":0.001,"nonzero":3,"hist":"x"}]}`,
		// Zeros left out; no tags.
		`{"type":"window","start":"2026-01-02T03:04:05Z","series":[{"metric":"m","kind":"counter","count":0}]}`,
		`{"type":"window","start":"2026-01-02T03:04:05Z","series":[]}`,
		`{"type":"window","start":"2026-01-02T03:04:05Z","series":null}`,
	)
}

// TestWireSeriesDecodeAsBefore: a window line's series read through the
// wire types are the record.Series the decoder read before (straight into
// record.Series), and encode again to the line's own bytes, as the
// record's series do.
func TestWireSeriesDecodeAsBefore(t *testing.T) {
	for _, line := range windowLines(t) {
		var before struct {
			Series []record.Series `json:"series"`
		}
		if err := json.Unmarshal([]byte(line), &before); err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Series json.RawMessage `json:"series"`
		}
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatal(err)
		}
		var e wire.Envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		var got []record.Series
		if e.Series != nil {
			got = []record.Series{}
		}
		for i := range e.Series {
			got = append(got, fromWire(&e.Series[i]))
		}
		if !reflect.DeepEqual(got, before.Series) {
			t.Errorf("%s:\ndecodes to %+v\nbefore     %+v", line, got, before.Series)
		}
		fromRecord, err := json.Marshal(before.Series)
		if err != nil {
			t.Fatal(err)
		}
		fromWireTypes, err := json.Marshal(toWire(got))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fromWireTypes, raw.Series) || !bytes.Equal(fromRecord, raw.Series) {
			t.Errorf("series encode differently:\nline   %s\nwire   %s\nrecord %s", raw.Series, fromWireTypes, fromRecord)
		}
	}
}

// TestDecodedWindowsAsBefore: the decoder's windows of each line are those
// of a window of record.Series read straight from it, as before.
func TestDecodedWindowsAsBefore(t *testing.T) {
	for _, line := range windowLines(t) {
		var before struct {
			Start  time.Time       `json:"start"`
			Series []record.Series `json:"series"`
		}
		if err := json.Unmarshal([]byte(line), &before); err != nil {
			t.Fatal(err)
		}
		var want record.WindowSet
		if err := want.Add(record.Window{Start: before.Start.UTC(), Series: before.Series}); err != nil {
			t.Fatal(err)
		}
		sum, err := Decode(strings.NewReader(`{"type":"hello","version":1,"extension":"x"}` + "\n" + line + "\n"))
		if strings.Contains(line, `"hist":"x"`) {
			// A histogram that is not one is refused, as before.
			if err == nil || sum.Malformed != 1 {
				t.Errorf("%s: malformed %d, err %v; want refused", line, sum.Malformed, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if !reflect.DeepEqual(sum.Windows, want.Windows()) {
			t.Errorf("%s:\ndecoded %+v\nbefore  %+v", line, sum.Windows, want.Windows())
		}
	}
}

// TestWriterLinesAsBefore: the Writer's lines are byte for byte those it
// wrote from its own copies of the messages, before the wire types.
func TestWriterLinesAsBefore(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Hello{K6: "v1.8.1", Extension: "native test", Shard: "0/2"})
	if err != nil {
		t.Fatal(err)
	}
	wins := append(encodeWindows(t), record.Window{Start: time.Date(2026, 3, 4, 5, 6, 9, 500_000_000, time.FixedZone("CET", 3600)), Series: []record.Series{
		{Metric: "vus", Kind: record.Gauge, Count: 2, Min: 3, Max: 5, Last: 4},
	}})
	writeAll(t, w, wins, 3)

	want := `{"type":"hello","version":1,"k6":"v1.8.1","extension":"native test","shard":"0/2"}` + "\n"
	for _, win := range wins {
		b, err := json.Marshal(struct {
			Type   string          `json:"type"`
			Start  string          `json:"start"`
			Series []record.Series `json:"series"`
		}{"window", win.Start.UTC().Format(time.RFC3339Nano), win.Series})
		if err != nil {
			t.Fatal(err)
		}
		want += string(b) + "\n"
	}
	want += `{"type":"end","dropped":3}` + "\n"
	if buf.String() != want {
		t.Fatalf("writer wrote:\n%s\nwant:\n%s", buf.String(), want)
	}
}
