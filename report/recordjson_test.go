package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

// sliceSource serves windows from memory through Source, as a live run's
// window log does from disk.
type sliceSource []record.Window

func (s sliceSource) EachWindow(f func(record.Window) error) error {
	return (&record.Run{Windows: s}).EachWindow(f)
}

// TestEncodeJSONStreamsWindows: the record encoded window by window, from
// Windows or from a Source, is byte for byte what encoding/json writes for
// the whole record.
func TestEncodeJSONStreamsWindows(t *testing.T) {
	for _, name := range []string{"base1", "halved1"} {
		t.Run(name, func(t *testing.T) {
			r := recorded(t, name)
			want, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
			var inMemory bytes.Buffer
			if err := EncodeJSON(&inMemory, r); err != nil {
				t.Fatal(err)
			}
			live := *r
			live.Windows, live.Source = nil, sliceSource(r.Windows)
			var fromSource bytes.Buffer
			if err := EncodeJSON(&fromSource, &live); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(inMemory.Bytes(), want) {
				t.Error("from Windows: differs from json.Marshal")
			}
			if !bytes.Equal(fromSource.Bytes(), want) {
				t.Error("from Source: differs from json.Marshal")
			}
		})
	}
}

// TestOpenJSONReadsWindowsLazily: a record opened without its windows
// reads back the same record and, through Source, the same windows; the
// callback's error stops the reading unchanged.
func TestOpenJSONReadsWindowsLazily(t *testing.T) {
	full := recorded(t, "base1")
	p := filepath.Join(t.TempDir(), "run.json")
	if err := WriteJSON(p, full); err != nil {
		t.Fatal(err)
	}
	lazy, err := OpenJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	if lazy.Windows != nil || lazy.Source == nil {
		t.Fatalf("OpenJSON: %d windows in memory, source %v; want none and a source", len(lazy.Windows), lazy.Source)
	}
	var got []record.Window
	if err := lazy.EachWindow(func(w record.Window) error { got = append(got, w); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, full.Windows) {
		t.Fatalf("read %d windows through Source, want the %d of the record", len(got), len(full.Windows))
	}
	head := *lazy
	head.Source, head.Windows = nil, full.Windows
	if !reflect.DeepEqual(&head, full) {
		t.Error("the record without its windows differs from the one ReadJSON reads")
	}
	if Markdown(lazy) != Markdown(full) {
		t.Error("Markdown of the lazily read record differs")
	}
	stop := errors.New("stop")
	n := 0
	err = lazy.EachWindow(func(record.Window) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("EachWindow with a failing callback: %v after %d windows; want stop after 1", err, n)
	}
}

func TestOpenJSONRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, body string }{
		{"not json", "windows"},
		{"not an object", "[1,2]"},
		{"truncated", `{"schema_version":1,"windows":[{"start":`},
		{"old schema", `{"schema_version":99,"windows":[]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "run.json")
			if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := OpenJSON(p); err == nil {
				t.Errorf("OpenJSON(%q): no error", tc.body)
			}
		})
	}
}
