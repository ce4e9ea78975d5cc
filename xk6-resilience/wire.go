package resilience

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// WireVersion is the version of the stream's line format.
const WireVersion = 1

// helloMsg is the first line of every connection or file.
type helloMsg struct {
	Type      string `json:"type"` // "hello"
	Version   int    `json:"version"`
	K6        string `json:"k6,omitempty"`
	Extension string `json:"extension"`
	// Shard names this instance's part of a split test ("1/4"), if any.
	Shard string `json:"shard,omitempty"`
	// Token is the run's token, over TCP only; a receiver answers a hello
	// that carries one with an answerMsg.
	Token string `json:"token,omitempty"`
}

// answerMsg is the receiver's answer to a hello with a token.
type answerMsg struct {
	Type  string `json:"type"` // "welcome" or "refused"
	Error string `json:"error,omitempty"`
}

// windowMsg carries the series of one second. Several may share a start; the
// receiver merges them.
type windowMsg struct {
	Type   string       `json:"type"` // "window"
	Start  string       `json:"start"`
	Series []seriesJSON `json:"series"`
}

// endMsg is the last line, written when k6 stops the output.
type endMsg struct {
	Type    string `json:"type"` // "end"
	Dropped int64  `json:"dropped"`
}

// seriesJSON has exactly the JSON layout of the harness's record.Series.
type seriesJSON struct {
	Metric  string            `json:"metric"`
	Kind    string            `json:"kind"`
	Tags    map[string]string `json:"tags,omitempty"`
	Count   int64             `json:"count"`
	Sum     float64           `json:"sum,omitempty"`
	Min     float64           `json:"min,omitempty"`
	Max     float64           `json:"max,omitempty"`
	Last    float64           `json:"last,omitempty"`
	NonZero int64             `json:"nonzero,omitempty"`
	Hist    string            `json:"hist,omitempty"`
}

func line(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func helloLine(k6, ext, shard, token string) ([]byte, error) {
	return line(helloMsg{Type: "hello", Version: WireVersion, K6: k6, Extension: ext, Shard: shard, Token: token})
}

func endLine(dropped int64) ([]byte, error) {
	return line(endMsg{Type: "end", Dropped: dropped})
}

// windowLine encodes a window as one line, its series sorted by metric and tags.
func windowLine(w *window) ([]byte, error) {
	keys := make([]string, 0, len(w.series))
	for k := range w.series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	msg := windowMsg{
		Type:   "window",
		Start:  time.Unix(w.start, 0).UTC().Format(time.RFC3339Nano),
		Series: make([]seriesJSON, 0, len(keys)),
	}
	for _, k := range keys {
		g := w.series[k]
		s := seriesJSON{Metric: g.desc.metric, Kind: g.desc.kind, Tags: g.desc.tags, Count: g.count}
		switch g.desc.kind {
		case "trend":
			s.Sum, s.Min, s.Max = g.sum, g.min, g.max
			// Encode returns the compressed V2 histogram already in base64.
			enc, err := g.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			if err != nil {
				return nil, fmt.Errorf("encode histogram of %s at %s: %w", g.desc.metric, msg.Start, err)
			}
			s.Hist = string(enc)
		case "counter":
			s.Sum = g.sum
		case "rate":
			s.NonZero = g.nonzero
		case "gauge":
			s.Min, s.Max, s.Last = g.min, g.max, g.last
		}
		msg.Series = append(msg.Series, s)
	}
	return line(msg)
}
