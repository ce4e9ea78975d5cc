package record

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The record's histogram parameters: values in microunits (k6 value×1000),
// from 1 to one hour of milliseconds, 3 significant figures, as the
// xk6-resilience output and the native engine record them.
const (
	HistLowest  = 1
	HistHighest = 3_600_000_000
	HistSigFigs = 3
)

// Bounds on a histogram read from outside (the results stream, a record
// file), to keep a bad one from allocating without limit.
const (
	maxHistInflated = 4 << 20
	maxHistHighest  = 1 << 42
	maxHistSigFigs  = 3
	maxHistTotal    = 1 << 53
)

// NewHist returns an empty histogram with the record's parameters.
func NewHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowest, HistHighest, HistSigFigs)
}

// EncodeHist encodes a histogram as Series.Hist holds it: compressed
// V2 encoding, base64 (hdrhistogram's Encode already returns base64 text).
func EncodeHist(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHist decodes Series.Hist. It checks the encoding (header,
// bounds, every count) first and never panics on bad input.
func DecodeHist(s string) (h *hdrhistogram.Histogram, err error) {
	total, err := HistCount(s)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("bad histogram: corrupt counts (%v)", r)
		}
	}()
	h, err = hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("bad histogram: %w", err)
	}
	if h.TotalCount() != total {
		return nil, fmt.Errorf("bad histogram: counts add up to %d, total says %d", total, h.TotalCount())
	}
	return h, nil
}

// HistCount checks an encoded histogram as DecodeHist does and returns
// how many values it holds, without building it: a histogram of the
// record's range is ~180 KiB of counts, its encoding a few hundred bytes.
func HistCount(s string) (int64, error) {
	e, err := parseHist(s)
	return e.total, err
}

// histEnc is a checked histogram encoding: its parameters and payload.
type histEnc struct {
	lowest, highest, sig int64
	slots                int64 // counts a histogram of these parameters has
	total                int64
	payload              []byte
}

// parseHist inflates and checks an encoding: header, bounds, and every
// count within the histogram and its total within bounds.
func parseHist(s string) (histEnc, error) {
	inflated, err := checkHist(s)
	if err != nil {
		return histEnc{}, fmt.Errorf("bad histogram: %w", err)
	}
	e := histEnc{
		sig:     int64(binary.BigEndian.Uint32(inflated[12:16])),
		lowest:  int64(binary.BigEndian.Uint64(inflated[16:24])),
		highest: int64(binary.BigEndian.Uint64(inflated[24:32])),
		payload: inflated[40:],
	}
	e.slots = countsLen(e.lowest, e.highest, e.sig)
	err = e.each(func(i, v int64) error {
		switch {
		case v < 0 && -v > e.slots-i:
			return fmt.Errorf("a run of %d zero counts passes the histogram's %d counts", -v, e.slots)
		case v < 0:
		case i >= e.slots:
			return fmt.Errorf("count at index %d past the histogram's %d counts", i, e.slots)
		case e.total > maxHistTotal-v:
			return fmt.Errorf("count %d at index %d overflows the total", v, i)
		default:
			e.total += v
		}
		return nil
	})
	if err != nil {
		return histEnc{}, fmt.Errorf("bad histogram: %w", err)
	}
	return e, nil
}

// each calls f with every varint of the payload and the count index it
// applies at: a count (v >= 0), or minus a run of zero counts (v < 0).
// The payload is ZigZag LEB128 varints.
func (e histEnc) each(f func(idx, v int64) error) error {
	var idx int64
	for p := e.payload; len(p) > 0; {
		u, n := binary.Uvarint(p)
		if n <= 0 || n > 8 {
			return fmt.Errorf("varint at payload byte %d is truncated or too long", len(e.payload)-len(p))
		}
		p = p[n:]
		v := int64(u>>1) ^ -int64(u&1)
		if err := f(idx, v); err != nil {
			return err
		}
		if v < 0 {
			idx += -v
		} else {
			idx++
		}
	}
	return nil
}

// maxCountsLens bounds the parameter sets countsLen remembers: a stream
// could send ever new ones.
const maxCountsLens = 64

var (
	countsLens       sync.Map
	countsLenEntries atomic.Int64
)

// countsLen is how many counts a histogram of these parameters has,
// remembered for the few parameter sets a run sees.
func countsLen(lowest, highest, sig int64) int64 {
	key := [3]int64{lowest, highest, sig}
	if n, ok := countsLens.Load(key); ok {
		return n.(int64)
	}
	n := int64(len(hdrhistogram.New(lowest, highest, int(sig)).Export().Counts))
	if countsLenEntries.Add(1) <= maxCountsLens {
		countsLens.Store(key, n)
	}
	return n
}

// inflaters keeps zlib readers for reuse: each holds ~40 KiB of state, and
// every series of every window is inflated.
var inflaters sync.Pool

// inflater returns a zlib reader of b, from the pool when it has one.
func inflater(b []byte) (io.ReadCloser, error) {
	if zr, ok := inflaters.Get().(io.ReadCloser); ok {
		if err := zr.(zlib.Resetter).Reset(bytes.NewReader(b), nil); err != nil {
			return nil, err
		}
		return zr, nil
	}
	return zlib.NewReader(bytes.NewReader(b))
}

// checkHist validates what hdrhistogram.Decode would otherwise index
// blindly and returns the inflated header and payload.
func checkHist(s string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	if len(raw) < 8 {
		return nil, fmt.Errorf("%d bytes, shorter than the 8-byte header", len(raw))
	}
	cookie := int32(binary.BigEndian.Uint32(raw[0:4]))
	if cookie&^0xf0 != hdrhistogram.V2CompressedEncodingCookieBase {
		return nil, fmt.Errorf("cookie %#x is not the V2 compressed encoding", cookie)
	}
	n := int32(binary.BigEndian.Uint32(raw[4:8]))
	if n < 0 || int(n) > len(raw)-8 {
		return nil, fmt.Errorf("compressed length %d, but %d bytes follow", n, len(raw)-8)
	}
	zr, err := inflater(raw[8 : 8+n])
	if err != nil {
		return nil, fmt.Errorf("not zlib: %w", err)
	}
	defer inflaters.Put(zr)
	inflated, err := io.ReadAll(io.LimitReader(zr, maxHistInflated+1))
	if err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	if len(inflated) > maxHistInflated {
		return nil, errors.New("inflates past 4 MiB")
	}
	if len(inflated) < 40 {
		return nil, fmt.Errorf("inflated header is %d bytes, want 40", len(inflated))
	}
	payload := int32(binary.BigEndian.Uint32(inflated[4:8]))
	sig := int32(binary.BigEndian.Uint32(inflated[12:16]))
	lowest := int64(binary.BigEndian.Uint64(inflated[16:24]))
	highest := int64(binary.BigEndian.Uint64(inflated[24:32]))
	switch {
	case int(payload) != len(inflated)-40:
		return nil, fmt.Errorf("payload length %d, but %d bytes follow the header", payload, len(inflated)-40)
	case sig < 1 || sig > maxHistSigFigs:
		return nil, fmt.Errorf("%d significant figures; allowed 1 to %d", sig, maxHistSigFigs)
	case lowest < 1 || highest < 2*lowest || highest > maxHistHighest:
		return nil, fmt.Errorf("range %d..%d; allowed lowest >= 1, highest >= 2×lowest and <= %d", lowest, highest, int64(maxHistHighest))
	}
	return inflated, nil
}
