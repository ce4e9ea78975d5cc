package stream

import (
	"bytes"
	"os"
	"testing"
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
