package stream

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// WindowLog is an append-only file of windows with an index of where each
// start's entries lie, so that a run's windows go to disk as they settle
// and are read back in start order without being held in memory. A start
// may have several entries (a window that arrived late); reading merges
// them. The file is unlinked as soon as it is created: it never outlives
// the log's process, and Close frees it.
type WindowLog struct {
	mu     sync.Mutex
	f      *os.File
	size   int64
	index  logIndex
	closed bool
}

// span is one entry's place in the file.
type span struct{ off, n int64 }

// logIndex says where each start's entries lie: the first in first, any
// later ones (a window that arrived late) in late. One span a start is
// what grows with the run's length, so it is kept without a slice.
type logIndex struct {
	first map[int64]span
	late  map[int64][]span
}

func (x *logIndex) add(k int64, s span) {
	if _, ok := x.first[k]; !ok {
		x.first[k] = s
		return
	}
	x.late[k] = append(x.late[k], s)
}

// spans lists the entries of start k, in the order they were appended.
func (x *logIndex) spans(k int64) []span {
	s, ok := x.first[k]
	if !ok {
		return nil
	}
	return append([]span{s}, x.late[k]...)
}

// clone copies the index, for reading outside the log's lock.
func (x *logIndex) clone() logIndex {
	out := logIndex{first: maps.Clone(x.first), late: make(map[int64][]span, len(x.late))}
	for k, v := range x.late {
		out.late[k] = slices.Clip(v)
	}
	return out
}

// CreateWindowLog creates a window log in dir ("" is the system's
// temporary folder).
func CreateWindowLog(dir string) (*WindowLog, error) {
	f, err := os.CreateTemp(dir, ".chaosrun-windows-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("window log: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("window log: unlink %s: %w", f.Name(), err)
	}
	return &WindowLog{f: f, index: logIndex{first: make(map[int64]span), late: make(map[int64][]span)}}, nil
}

// Append writes w as one entry.
func (l *WindowLog) Append(w record.Window) error {
	b, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("window log: encode window %s: %w", w.Start.Format(time.RFC3339), err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("window log: closed")
	}
	if _, err := l.f.WriteAt(b, l.size); err != nil {
		return fmt.Errorf("window log: write: %w", err)
	}
	k := w.Start.UnixNano()
	l.index.add(k, span{l.size, int64(len(b))})
	l.size += int64(len(b))
	return nil
}

// Len is the number of distinct window starts in the log.
func (l *WindowLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.index.first)
}

// Size is the log's length on disk in bytes.
func (l *WindowLog) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
}

// EachWindow calls f with each window in start order, its entries merged.
func (l *WindowLog) EachWindow(f func(record.Window) error) error {
	return WindowLogs{l}.EachWindow(f)
}

// Close frees the log's file. Reading or appending afterwards fails.
func (l *WindowLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.f.Close()
}

// snapshot returns the log's index, for reading outside the lock.
func (l *WindowLog) snapshot() (logIndex, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return logIndex{}, errors.New("window log: closed")
	}
	return l.index.clone(), nil
}

// read decodes the entry at s.
func (l *WindowLog) read(s span) (record.Window, error) {
	b := make([]byte, s.n)
	if _, err := l.f.ReadAt(b, s.off); err != nil {
		return record.Window{}, fmt.Errorf("window log: read at %d: %w", s.off, err)
	}
	var w record.Window
	if err := json.Unmarshal(b, &w); err != nil {
		return record.Window{}, fmt.Errorf("window log: entry at %d: %w", s.off, err)
	}
	return w, nil
}

// WindowLogs reads several logs (e.g. one per load shard) as one: windows
// with the same start are merged exactly, in start order.
type WindowLogs []*WindowLog

// EachWindow calls f with each window of the logs in start order, the
// entries of one start merged; it stops at f's first error.
func (ls WindowLogs) EachWindow(f func(record.Window) error) error {
	return Spilled{Logs: ls}.EachWindow(f)
}

// Close closes every log.
func (ls WindowLogs) Close() error {
	var errs []error
	for _, l := range ls {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

// Spilled is what receivers with logs kept: their logs, and the windows
// they still held because a log could not be written. It reads as one.
type Spilled struct {
	Logs WindowLogs
	Held []record.Window
}

// EachWindow calls f with each window in start order, the log entries and
// held windows of one start merged; it stops at f's first error.
func (sp Spilled) EachWindow(f func(record.Window) error) error {
	indexes := make([]logIndex, len(sp.Logs))
	var starts []int64
	for i, l := range sp.Logs {
		idx, err := l.snapshot()
		if err != nil {
			return err
		}
		indexes[i] = idx
		for k := range idx.first {
			starts = append(starts, k)
		}
	}
	held := make(map[int64][]record.Window, len(sp.Held))
	for _, w := range sp.Held {
		k := w.Start.UnixNano()
		held[k] = append(held[k], w)
		starts = append(starts, k)
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	for _, k := range starts {
		var parts []record.Window
		for i, l := range sp.Logs {
			for _, s := range indexes[i].spans(k) {
				w, err := l.read(s)
				if err != nil {
					return err
				}
				parts = append(parts, w)
			}
		}
		parts = append(parts, held[k]...)
		if len(parts) > 1 {
			merged, err := record.MergeWindows(parts)
			if err != nil {
				return fmt.Errorf("window log: %w", err)
			}
			parts = merged
		}
		for _, w := range parts {
			if err := f(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// Span is the first and the last window start held; ok is false when
// there is no window.
func (sp Spilled) Span() (first, last time.Time, ok bool, err error) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	see := func(k int64) { lo, hi = min(lo, k), max(hi, k) }
	for _, l := range sp.Logs {
		idx, err := l.snapshot()
		if err != nil {
			return time.Time{}, time.Time{}, false, err
		}
		for k := range idx.first {
			see(k)
		}
	}
	for _, w := range sp.Held {
		see(w.Start.UnixNano())
	}
	if lo > hi {
		return time.Time{}, time.Time{}, false, nil
	}
	return time.Unix(0, lo).UTC(), time.Unix(0, hi).UTC(), true, nil
}

// Close closes the logs.
func (sp Spilled) Close() error { return sp.Logs.Close() }
