package record

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/chaosrun/chaosrun/internal/workdir"
)

// windowsKey is where the windows go in the encoded record: encoding/json
// writes a nil slice as null, and a key's quotes cannot appear unescaped
// inside a string value, so its first match is the record's own field.
var windowsKey = []byte(`"windows":null`)

// WriteJSON writes the run record to path as compact JSON, creating its
// folder. The windows are encoded one at a time as they are read from the
// record, so a long run's record is never whole in memory.
func WriteJSON(path string, r *Run) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	err = EncodeJSON(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	return nil
}

// EncodeJSON writes the run record to w as compact JSON (indentation adds
// 40% to a record of thousands of series) followed by a newline.
func EncodeJSON(w io.Writer, r *Run) error {
	head := *r
	head.Windows, head.Source = nil, nil
	b, err := json.Marshal(&head)
	if err != nil {
		return fmt.Errorf("encode run record: %w", err)
	}
	at := bytes.Index(b, windowsKey)
	if at < 0 {
		return errors.New("encode run record: no windows field")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(b[:at])
	bw.WriteString(`"windows":[`)
	first := true
	err = r.EachWindow(func(win Window) error {
		wb, err := json.Marshal(win)
		if err != nil {
			return fmt.Errorf("encode window %s: %w", win.Start, err)
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		_, err = bw.Write(wb)
		return err
	})
	if err != nil {
		return err
	}
	bw.WriteByte(']')
	bw.Write(b[at+len(windowsKey):])
	bw.WriteByte('\n')
	return bw.Flush()
}

// ReadJSON reads a run record written by WriteJSON, windows and all: at
// most workdir.MaxRecord bytes, decoded as they are read, so that a file
// that is no record (/dev/zero, a binary) fails at its first bytes. It
// returns when ctx ends, even if the read blocks (a FIFO).
func ReadJSON(ctx context.Context, path string) (*Run, error) {
	r, err := workdir.Read(ctx, path, workdir.MaxRecord, workdir.OS(path), decodeRun)
	switch {
	case err == nil:
	case ctx.Err() != nil || errors.As(err, new(*workdir.TooLargeError)) || errors.As(err, new(*fs.PathError)):
		return nil, fmt.Errorf("record: %w", err) // these name the file
	default:
		return nil, fmt.Errorf("record: %s: %w", path, err)
	}
	if err := checkSchema(path, r); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeRun decodes one JSON object, and nothing after it, into a record.
func decodeRun(rd io.Reader) (*Run, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(rd, 64<<10))
	var r Run
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more after the record (%v); want one JSON object", err)
	}
	return &r, nil
}

// OpenJSON reads a run record written by WriteJSON without its windows:
// the record's Source reads them from the file each time they are asked
// for, one at a time. For records kept around while others are made (a
// catalog's combined report).
func OpenJSON(path string) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	head := map[string]json.RawMessage{}
	err = scanRecord(bufio.NewReaderSize(f, 64<<10), func(key string, dec *json.Decoder) error {
		if key == "windows" {
			return skipValue(dec)
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		head[key] = raw
		return err
	})
	var r Run
	if err == nil {
		var b []byte
		if b, err = json.Marshal(head); err == nil {
			err = json.Unmarshal(b, &r)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("record: %s: %w", path, err)
	}
	if err := checkSchema(path, &r); err != nil {
		return nil, err
	}
	r.Source = fileWindows(path)
	return &r, nil
}

func checkSchema(path string, r *Run) error {
	if r.SchemaVersion != SchemaVersion {
		return fmt.Errorf("record: %s: run record schema version %d (this chaosrun reads %d)", path, r.SchemaVersion, SchemaVersion)
	}
	return nil
}

// fileWindows streams the windows of a run record file.
type fileWindows string

// EachWindow decodes the file's windows one at a time.
func (p fileWindows) EachWindow(fn func(Window) error) error {
	f, err := os.Open(string(p))
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	err = scanRecord(bufio.NewReaderSize(f, 64<<10), func(key string, dec *json.Decoder) error {
		if key != "windows" {
			return skipValue(dec)
		}
		if err := expectDelim(dec, '['); err != nil {
			return err
		}
		for dec.More() {
			var w Window
			if err := dec.Decode(&w); err != nil {
				return err
			}
			if err := fn(w); err != nil {
				return errStop{err}
			}
		}
		return expectDelim(dec, ']')
	})
	var stop errStop
	if errors.As(err, &stop) {
		return stop.err
	}
	if err != nil {
		return fmt.Errorf("record: %s: %w", string(p), err)
	}
	return nil
}

// errStop carries the callback's own error through scanRecord unwrapped.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

// scanRecord calls field with each top-level key of the JSON object in r;
// field must consume the key's value from dec.
func scanRecord(r io.Reader, field func(key string, dec *json.Decoder) error) error {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := t.(string)
		if !ok {
			return fmt.Errorf("want an object key, got %v", t)
		}
		if err := field(key, dec); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

// skipValue consumes one value from dec without keeping it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, t)
	}
	return nil
}
