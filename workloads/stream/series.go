package stream

import (
	"github.com/chaosrun/chaosrun/models/wire"
	"github.com/chaosrun/chaosrun/record"
)

// The stream's series (wire.Series, shared with the k6 extension) and the
// run record's (record.Series) have the same fields and the same JSON
// layout; the decoder and the Writer copy one into the other, field for
// field, so that a window goes from the wire into the record unchanged.

// fromWire is the record's copy of a series read from the stream.
func fromWire(s *wire.Series) record.Series {
	return record.Series{Metric: s.Metric, Kind: record.Kind(s.Kind), Tags: s.Tags, Count: s.Count,
		Sum: s.Sum, Min: s.Min, Max: s.Max, Last: s.Last, NonZero: s.NonZero, Hist: s.Hist}
}

// toWire is the stream's copy of a window's series.
func toWire(ss []record.Series) []wire.Series {
	if ss == nil {
		return nil
	}
	out := make([]wire.Series, len(ss))
	for i, s := range ss {
		out[i] = wire.Series{Metric: s.Metric, Kind: wire.Kind(s.Kind), Tags: s.Tags, Count: s.Count,
			Sum: s.Sum, Min: s.Min, Max: s.Max, Last: s.Last, NonZero: s.NonZero, Hist: s.Hist}
	}
	return out
}
