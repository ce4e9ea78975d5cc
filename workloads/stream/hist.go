package stream

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The stream's histogram parameters: values in microunits (k6 value×1000),
// from 1 to one hour of milliseconds, 3 significant figures.
const (
	HistLowest  = 1
	HistHighest = 3_600_000_000
	HistSigFigs = 3
)

// Bounds on a histogram read from the wire, to keep a bad one from
// allocating without limit.
const (
	maxHistInflated = 4 << 20
	maxHistHighest  = 1 << 42
	maxHistSigFigs  = 3
	maxHistTotal    = 1 << 53
)

// NewHist returns an empty histogram with the stream's parameters.
func NewHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowest, HistHighest, HistSigFigs)
}

// EncodeHist encodes a histogram as record.Series.Hist holds it: compressed
// V2 encoding, base64 (hdrhistogram's Encode already returns base64 text).
func EncodeHist(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHist decodes record.Series.Hist. It checks the encoding's header and
// bounds first and never panics on bad input.
func DecodeHist(s string) (h *hdrhistogram.Histogram, err error) {
	if err := checkHist(s); err != nil {
		return nil, fmt.Errorf("bad histogram: %w", err)
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
	// Counts must be non-negative and their total must not overflow, or
	// the library's iterators run off the end.
	var total int64
	for i, c := range h.Export().Counts {
		if c < 0 || total > maxHistTotal-c {
			return nil, fmt.Errorf("bad histogram: count %d at index %d is negative or overflows the total", c, i)
		}
		total += c
	}
	if total != h.TotalCount() {
		return nil, fmt.Errorf("bad histogram: counts add up to %d, total says %d", total, h.TotalCount())
	}
	return h, nil
}

// checkHist validates what hdrhistogram.Decode would otherwise index blindly.
func checkHist(s string) error {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("not base64: %w", err)
	}
	if len(raw) < 8 {
		return fmt.Errorf("%d bytes, shorter than the 8-byte header", len(raw))
	}
	cookie := int32(binary.BigEndian.Uint32(raw[0:4]))
	if cookie&^0xf0 != hdrhistogram.V2CompressedEncodingCookieBase {
		return fmt.Errorf("cookie %#x is not the V2 compressed encoding", cookie)
	}
	n := int32(binary.BigEndian.Uint32(raw[4:8]))
	if n < 0 || int(n) > len(raw)-8 {
		return fmt.Errorf("compressed length %d, but %d bytes follow", n, len(raw)-8)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+n]))
	if err != nil {
		return fmt.Errorf("not zlib: %w", err)
	}
	defer zr.Close()
	inflated, err := io.ReadAll(io.LimitReader(zr, maxHistInflated+1))
	if err != nil {
		return fmt.Errorf("inflate: %w", err)
	}
	if len(inflated) > maxHistInflated {
		return errors.New("inflates past 4 MiB")
	}
	if len(inflated) < 40 {
		return fmt.Errorf("inflated header is %d bytes, want 40", len(inflated))
	}
	payload := int32(binary.BigEndian.Uint32(inflated[4:8]))
	sig := int32(binary.BigEndian.Uint32(inflated[12:16]))
	lowest := int64(binary.BigEndian.Uint64(inflated[16:24]))
	highest := int64(binary.BigEndian.Uint64(inflated[24:32]))
	switch {
	case int(payload) != len(inflated)-40:
		return fmt.Errorf("payload length %d, but %d bytes follow the header", payload, len(inflated)-40)
	case sig < 1 || sig > maxHistSigFigs:
		return fmt.Errorf("%d significant figures; allowed 1 to %d", sig, maxHistSigFigs)
	case lowest < 1 || highest < 2*lowest || highest > maxHistHighest:
		return fmt.Errorf("range %d..%d; allowed lowest >= 1, highest >= 2×lowest and <= %d", lowest, highest, int64(maxHistHighest))
	}
	return nil
}
