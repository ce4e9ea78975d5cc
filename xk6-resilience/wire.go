package resilience

import (
	"fmt"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/chaosrun/chaosrun/models/wire"
)

// WireVersion is the version of the stream's line format.
const WireVersion = wire.Version

func helloLine(k6, ext, shard, token string) ([]byte, error) {
	return wire.Line(wire.Hello{Type: wire.TypeHello, Version: wire.Version, K6: k6, Extension: ext, Shard: shard, Token: token})
}

func endLine(dropped int64) ([]byte, error) {
	return wire.Line(wire.End{Type: wire.TypeEnd, Dropped: dropped})
}

// windowLine encodes a window as one line, its series sorted by metric and tags.
func windowLine(w *window) ([]byte, error) {
	keys := make([]string, 0, len(w.series))
	for k := range w.series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	msg := wire.Window{
		Type:   wire.TypeWindow,
		Start:  wire.FormatStart(time.Unix(w.start, 0)),
		Series: make([]wire.Series, 0, len(keys)),
	}
	for _, k := range keys {
		g := w.series[k]
		s := wire.Series{Metric: g.desc.metric, Kind: g.desc.kind, Tags: g.desc.tags, Count: g.count}
		switch g.desc.kind {
		case wire.Trend:
			s.Sum, s.Min, s.Max = g.sum, g.min, g.max
			// Encode returns the compressed V2 histogram already in base64.
			enc, err := g.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			if err != nil {
				return nil, fmt.Errorf("encode histogram of %s at %s: %w", g.desc.metric, msg.Start, err)
			}
			s.Hist = string(enc)
		case wire.Counter:
			s.Sum = g.sum
		case wire.Rate:
			s.NonZero = g.nonzero
		case wire.Gauge:
			s.Min, s.Max, s.Last = g.min, g.max, g.last
		}
		msg.Series = append(msg.Series, s)
	}
	return wire.Line(msg)
}
