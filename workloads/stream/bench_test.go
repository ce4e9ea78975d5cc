package stream

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// BenchmarkDecode decodes and merges the extension's golden stream: the
// harness's side of every results window.
func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile(golden)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWindowLog appends one second's window to a window log: what
// the receiver does for each settled second of a run.
func BenchmarkWindowLog(b *testing.B) {
	sum, err := DecodeFile(golden)
	if err != nil || len(sum.Windows) == 0 {
		b.Fatalf("golden stream: %d windows, %v", len(sum.Windows), err)
	}
	w := sum.Windows[0]
	l, err := CreateWindowLog(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.ReportAllocs()
	for b.Loop() {
		w.Start = w.Start.Add(time.Second)
		if err := l.Append(w); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(l.Size() / int64(max(l.Len(), 1)))
}
