package workdir

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

// TestReadFileBounded: a file up to the cap is read whole; one byte more
// is a *TooLargeError naming the file as given and the cap; an endless
// file (/dev/zero) is refused at the cap, at once.
func TestReadFileBounded(t *testing.T) {
	w := FS{FS: fstest.MapFS{"p/four": {Data: []byte("1234")}, "p/five": {Data: []byte("12345")}}, Dir: "/p"}
	for _, tc := range []struct {
		name, file string
		max        int64
		want       string // the data, or the error
	}{
		{"under the cap", "four", 5, "1234"},
		{"at the cap", "four", 4, "1234"},
		{"one byte over", "five", 4, "five: the file goes on past 4 bytes, the most chaosrun reads of it"},
		{"no cap", "five", 0, "12345"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := w.ReadFile(context.Background(), tc.file, tc.max)
			got := string(b)
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t0 := time.Now()
	_, err := Read(context.Background(), "/dev/zero", 1<<20, OS("/dev/zero"), io.ReadAll)
	var tl *TooLargeError
	if !errors.As(err, &tl) || err.Error() != "/dev/zero: the file goes on past 1 MiB, the most chaosrun reads of it" || time.Since(t0) > 2*time.Second {
		t.Errorf("/dev/zero: %v after %s", err, time.Since(t0))
	}
}

// TestReadCancels: a FIFO nobody writes to blocks its open; Read returns
// once ctx ends, naming the file and why. A read under way stops reading
// an endless source when ctx ends.
func TestReadCancels(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := Read(ctx, "fifo", 0, OS(fifo), io.ReadAll)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "reading fifo") || time.Since(t0) > 5*time.Second {
		t.Errorf("Read of a blocked FIFO: %v after %s", err, time.Since(t0))
	}
	if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil { // let the open end
		f.Close()
	}

	ctx, cancel = context.WithCancel(context.Background())
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer zero.Close()
	r := Limit(ctx, "/dev/zero", zero, 0)
	buf := make([]byte, 10)
	if n, err := r.Read(buf); n != 10 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	cancel()
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %d, %v", n, err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{256 << 10: "256 KiB", 16 << 20: "16 MiB", 1 << 30: "1 GiB", 1000: "1000 bytes", 1536: "1536 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
