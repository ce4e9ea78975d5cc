package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// sliceSource serves windows from memory through Source, as a live run's
// window log does from disk.
type sliceSource []Window

func (s sliceSource) EachWindow(f func(Window) error) error {
	return (&Run{Windows: s}).EachWindow(f)
}

// TestEncodeJSONStreamsWindows: the record encoded window by window, from
// Windows or from a Source, is byte for byte what encoding/json writes for
// the whole
func TestEncodeJSONStreamsWindows(t *testing.T) {
	for _, n := range []int{1, 7} {
		t.Run(fmt.Sprintf("%d windows", n), func(t *testing.T) {
			r := sampleRun(t, n)
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
	p := filepath.Join(t.TempDir(), "run.json")
	if err := WriteJSON(p, sampleRun(t, 7)); err != nil {
		t.Fatal(err)
	}
	full, err := ReadJSON(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(full, sampleRun(t, 7)) {
		t.Error("ReadJSON reads back another record than WriteJSON wrote")
	}
	lazy, err := OpenJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	if lazy.Windows != nil || lazy.Source == nil {
		t.Fatalf("OpenJSON: %d windows in memory, source %v; want none and a source", len(lazy.Windows), lazy.Source)
	}
	var got []Window
	if err := lazy.EachWindow(func(w Window) error { got = append(got, w); return nil }); err != nil {
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
	stop := errors.New("stop")
	n := 0
	err = lazy.EachWindow(func(Window) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("EachWindow with a failing callback: %v after %d windows; want stop after 1", err, n)
	}
}

// TestOpenJSONRejectsBadFiles: bad files are refused by both readers.
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
			if _, err := ReadJSON(context.Background(), p); err == nil {
				t.Errorf("ReadJSON(%q): no error", tc.body)
			}
		})
	}
}

// FuzzReadJSON: a record file of any content is read or refused with an
// error by both readers, never with a panic, and a record OpenJSON accepts
// reads its windows or says why not.
func FuzzReadJSON(f *testing.F) {
	var b bytes.Buffer
	if err := EncodeJSON(&b, sampleRun(f, 2)); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(`{"schema_version":1,"windows":[]}`))
	f.Add([]byte(`{"schema_version":1,"windows":[{"start":"2026-01-01T00:00:00Z","series":[{"metric":"m","kind":"trend","count":1,"hist":"x"}]}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "run.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if r, err := ReadJSON(context.Background(), p); err == nil && r.SchemaVersion != SchemaVersion {
			t.Fatalf("ReadJSON accepted schema version %d", r.SchemaVersion)
		}
		r, err := OpenJSON(p)
		if err != nil {
			return
		}
		if r.SchemaVersion != SchemaVersion || r.Source == nil {
			t.Fatalf("OpenJSON accepted schema version %d, source %v", r.SchemaVersion, r.Source)
		}
		_ = r.EachWindow(func(Window) error { return nil })
	})
}
