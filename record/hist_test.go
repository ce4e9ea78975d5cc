package record

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// rawHist encodes a V2 compressed histogram with the given header values
// and payload bytes, as a sender could, well-formed or not.
func rawHist(t testing.TB, lowest, highest int64, sig int32, payload []byte) string {
	t.Helper()
	var inner bytes.Buffer
	for _, v := range []any{hdrhistogram.V2EncodingCookieBase | 0x10, int32(len(payload)), int32(0), sig, lowest, highest, float64(1)} {
		if err := binary.Write(&inner, binary.BigEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	inner.Write(payload)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(inner.Bytes())
	zw.Close()
	var outer bytes.Buffer
	binary.Write(&outer, binary.BigEndian, hdrhistogram.V2CompressedEncodingCookieBase|0x10)
	binary.Write(&outer, binary.BigEndian, int32(z.Len()))
	outer.Write(z.Bytes())
	return base64.StdEncoding.EncodeToString(outer.Bytes())
}

// zigzag appends v as a ZigZag LEB128 varint.
func zigzag(b []byte, v int64) []byte {
	return binary.AppendUvarint(b, uint64((v<<1)^(v>>63)))
}

// TestHistCount: counting an encoding without building the histogram
// agrees with decoding it, and rejects counts that would land outside it.
func TestHistCount(t *testing.T) {
	h := NewHist()
	for v := int64(1); v < 5_000_000; v = v*3 + 1 {
		h.RecordValues(v, v%7+1)
	}
	enc, err := EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	n, err := HistCount(enc)
	if err != nil || n != h.TotalCount() {
		t.Fatalf("HistCount = %d, %v; want %d", n, err, h.TotalCount())
	}
	slots := countsLen(HistLowest, HistHighest, HistSigFigs)
	cases := []struct {
		name    string
		payload []byte
		want    int64 // -1: an error
	}{
		{"counts and a zero run", zigzag(zigzag(zigzag(nil, 3), -10), 4), 7},
		{"empty", nil, 0},
		{"zero run to the last count", zigzag(zigzag(nil, -(slots-1)), 2), 2},
		{"count past the last", zigzag(zigzag(nil, -slots), 2), -1},
		{"zero run past the last", zigzag(nil, -(slots + 1)), -1},
		{"truncated varint", []byte{0x80}, -1},
		{"total overflows", zigzag(zigzag(nil, 1<<53), 1), -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := rawHist(t, HistLowest, HistHighest, HistSigFigs, tc.payload)
			n, err := HistCount(s)
			_, derr := DecodeHist(s)
			switch {
			case tc.want < 0 && (err == nil || derr == nil):
				t.Errorf("HistCount = %d, %v; DecodeHist error %v: want both to fail", n, err, derr)
			case tc.want >= 0 && (err != nil || n != tc.want || derr != nil):
				t.Errorf("HistCount = %d, %v; DecodeHist error %v: want %d and no errors", n, err, derr, tc.want)
			}
		})
	}
}

// TestHistRoundTrip: a histogram decodes to what was encoded; bad
// encodings are refused.
func TestHistRoundTrip(t *testing.T) {
	h := NewHist()
	for v := int64(1); v < 1e9; v *= 3 {
		_ = h.RecordValue(v)
	}
	enc, err := EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeHist(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equals(h) {
		t.Fatal("histogram changed on the round trip")
	}
	for _, bad := range []string{"", "!!", "AAAAAAAAAAAA", enc[:len(enc)/2]} {
		if _, err := DecodeHist(bad); err == nil {
			t.Errorf("DecodeHist(%q): want an error", bad)
		}
	}
}

// FuzzHistCount: counting an encoding and decoding it agree on every
// input: both fail, or both give the same total.
func FuzzHistCount(f *testing.F) {
	h := NewHist()
	for v := int64(1); v < 1e9; v *= 7 {
		h.RecordValue(v)
	}
	enc, err := EncodeHist(h)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(enc)
	f.Add("")
	f.Add(rawHist(f, 1, 1000, 2, zigzag(zigzag(nil, -5), 3)))
	f.Fuzz(func(t *testing.T, s string) {
		n, err := HistCount(s)
		h, derr := DecodeHist(s)
		switch {
		case (err == nil) != (derr == nil):
			t.Fatalf("HistCount error %v, DecodeHist error %v", err, derr)
		case err == nil && n != h.TotalCount():
			t.Fatalf("HistCount %d, decoded total %d", n, h.TotalCount())
		}
	})
}
