// Package wire is the line format of a results stream: what a load engine
// (the xk6-resilience output, the native engine) writes and the harness's
// receiver reads, on a TCP connection or in a file.
//
// A stream is JSON lines: a Hello, then one Window per second (several may
// share a start; the receiver merges them), then an End when the engine
// stops cleanly. Over TCP, a Hello that carries the run's token is answered
// with one Answer line. Every line has a "type" field (the Type constants).
//
// A Window's Series have exactly the JSON layout of a run record's series
// (the harness's record.Series): a window is copied into the record as it is.
package wire

import (
	"encoding/json"
	"time"
)

// Version is the version of the line format, sent in every Hello; a
// receiver refuses a stream of another version.
const Version = 1

// The type of each line.
const (
	TypeHello   = "hello"
	TypeWindow  = "window"
	TypeEnd     = "end"
	TypeWelcome = "welcome"
	TypeRefused = "refused"
)

// Hello is the first line of every connection or file.
type Hello struct {
	// Type is TypeHello.
	Type string `json:"type"`
	// Version is the line format's version (Version).
	Version int `json:"version"`
	// K6 is the k6 version of a k6 engine; empty for another engine.
	K6 string `json:"k6,omitempty"`
	// Extension names the engine that writes the stream and its version.
	Extension string `json:"extension"`
	// Shard names the sender's part of a split test ("1/4": shard 1 of 4,
	// from 0), if any; a receiver of several shards tells them apart by it.
	Shard string `json:"shard,omitempty"`
	// Token is the run's token, over TCP only (never in a file); a
	// receiver answers a hello that carries one with an Answer.
	Token string `json:"token,omitempty"`
}

// Answer is the receiver's one answer to a Hello with a token.
type Answer struct {
	// Type is TypeWelcome or TypeRefused.
	Type string `json:"type"`
	// Error says why the stream was refused.
	Error string `json:"error,omitempty"`
}

// Window carries the series of one second.
type Window struct {
	// Type is TypeWindow.
	Type string `json:"type"`
	// Start is the window's first instant (whole seconds), as FormatStart
	// writes it.
	Start string `json:"start"`
	// Series are the window's metrics, one per metric and tag set.
	Series []Series `json:"series"`
}

// End is the last line, written when the engine stops cleanly.
type End struct {
	// Type is TypeEnd.
	Type string `json:"type"`
	// Dropped counts the samples the engine could not aggregate.
	Dropped int64 `json:"dropped"`
}

// Envelope is any one line of a stream (Hello, Window or End), for a
// reader that learns its type by decoding it. It leaves out the Hello's
// token, which only the receiver's check of a connection reads.
type Envelope struct {
	Type      string   `json:"type"`
	Version   int      `json:"version"`
	K6        string   `json:"k6"`
	Extension string   `json:"extension"`
	Shard     string   `json:"shard"`
	Start     string   `json:"start"`
	Series    []Series `json:"series"`
	Dropped   int64    `json:"dropped"`
}

// Kind is the type of a k6 metric: what a Series' values mean.
type Kind string

// The k6 metric kinds.
const (
	Trend   Kind = "trend"
	Counter Kind = "counter"
	Rate    Kind = "rate"
	Gauge   Kind = "gauge"
)

// Series is one metric with one tag set, aggregated over a window.
//
// Trend: Count samples, Sum/Min/Max of their values (k6 units: ms for
// durations), Hist an HDR histogram of the values in microunits (value×1000).
// Counter: Sum is the total added, Count the number of samples.
// Rate: Count samples, NonZero of them non-zero.
// Gauge: Min, Max and Last value seen.
type Series struct {
	// Metric is the k6 metric's name.
	Metric string `json:"metric"`
	// Kind is the metric's type: what the values below mean.
	Kind Kind `json:"kind"`
	// Tags are the tags that matter (scenario, api, status, …), never a raw URL.
	Tags    map[string]string `json:"tags,omitempty"`
	Count   int64             `json:"count"`
	Sum     float64           `json:"sum,omitempty"`
	Min     float64           `json:"min,omitempty"`
	Max     float64           `json:"max,omitempty"`
	Last    float64           `json:"last,omitempty"`
	NonZero int64             `json:"nonzero,omitempty"`
	// Hist is an HDR histogram in its compressed, base64 encoding
	// (hdrhistogram-go Encode(V2CompressedEncodingCookieBase)).
	Hist string `json:"hist,omitempty"`
}

// FormatStart writes a window's start: RFC 3339 in UTC, with as many
// fractional digits as it needs (none for whole seconds).
func FormatStart(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseStart reads a window's start as FormatStart writes it (any RFC 3339
// time), in UTC.
func ParseStart(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t.UTC(), err
}

// Line encodes one message (Hello, Answer, Window, End) as a line: its JSON
// and a newline.
func Line(msg any) ([]byte, error) {
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
