package workdir

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Size caps of the files commands read besides scenarios (which have
// their own, checked with a position: scenario.MaxFileSize).
const (
	// MaxSmall bounds a PEM certificate or key, a CA bundle.
	MaxSmall = 1 << 20
	// MaxSpec bounds a native workload spec (chaosrun load --spec).
	MaxSpec = 16 << 20
	// MaxScript bounds a k6 script an export carries (a Kubernetes
	// ConfigMap holds at most 1 MiB).
	MaxScript = 1 << 20
	// MaxRecord bounds a run record (run.json) and a fault timeline:
	// records are decoded as they are read, so /dev/zero or a binary file
	// fails at its first byte; a well-formed one is held whole in memory.
	MaxRecord = 1 << 30
)

// TooLargeError is a file that goes on past the most its reader takes.
type TooLargeError struct {
	// File is the file as the user named it; Max the cap in bytes.
	File string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the file goes on past %s, the most chaosrun reads of it", e.File, Size(e.Max))
}

// Size writes a byte count in the largest binary unit that divides it:
// "256 KiB", "16 MiB", "1 GiB".
func Size(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Limit is r read as file: at most max bytes (max ≤ 0: no cap), the read
// that would go past them failing with a *TooLargeError, and no read at all
// once ctx ends (its cause, naming file), so that an endless source
// (/dev/zero, a results file that never ends) stops being read.
func Limit(ctx context.Context, file string, r io.Reader, max int64) io.Reader {
	return &limited{ctx: ctx, file: file, r: r, max: max}
}

type limited struct {
	ctx    context.Context
	file   string
	r      io.Reader
	max, n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.ctx.Err() != nil {
		return 0, fmt.Errorf("reading %s: %w", l.file, context.Cause(l.ctx))
	}
	if l.max > 0 && l.n >= l.max {
		// One byte more says whether the file goes on.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, &TooLargeError{File: l.file, Max: l.max}
		}
		return 0, err
	}
	if l.max > 0 && int64(len(p)) > l.max-l.n {
		p = p[:l.max-l.n]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}

// Opener opens a file for Read.
type Opener func() (io.ReadCloser, error)

// OS opens path on the real filesystem; errors name it as given.
func OS(path string) Opener {
	return func() (io.ReadCloser, error) { return os.Open(path) }
}

// Opener opens p in FS; errors name p as given.
func (w FS) Opener(p string) Opener {
	return func() (io.ReadCloser, error) { return w.Open(p) }
}

// Read opens file and returns what read makes of it, read through Limit
// (max bytes, ctx). It returns when ctx ends even if the open or a read
// does not: opening or reading a FIFO nobody writes to blocks, and no
// read can be cancelled. Such a read is left to its goroutine, which ends
// when the read does (or with the process); its result is dropped.
func Read[T any](ctx context.Context, file string, max int64, open Opener, read func(io.Reader) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		f, err := open()
		if err != nil {
			r.err = err
		} else {
			r.v, r.err = read(Limit(ctx, file, f, max))
			f.Close()
		}
		done <- r
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("reading %s: %w", file, context.Cause(ctx))
	}
}

// ReadFile reads p from FS, at most max bytes, as Read does.
func (w FS) ReadFile(ctx context.Context, p string, max int64) ([]byte, error) {
	return Read(ctx, p, max, w.Opener(p), io.ReadAll)
}
