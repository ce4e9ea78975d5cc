// Package stream receives and decodes the xk6-resilience output's stream
// (JSON lines: hello, window…, end) into record windows, merging windows
// that share a start.
package stream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/chaosrun/chaosrun/models/wire"
	"github.com/chaosrun/chaosrun/record"
)

// WireVersion is the stream line format this package reads and writes.
const WireVersion = wire.Version

// Limits on what a stream may hold.
const (
	// MaxLine is the longest line accepted; a longer one is skipped as
	// malformed, read through without being held. The output caps a
	// window at 10,000 series; a trend series with its histogram takes
	// up to about 1.5 KB, so a full window fits.
	MaxLine = 16 << 20
	// keptLineBuf is the largest line buffer kept for the next line; a
	// longer line's buffer is let go once the line is handled, so a
	// connection holds MaxLine only while it reads such a line.
	keptLineBuf = 1 << 20
	// maxKeptErrors bounds how many malformed-line errors are kept (all are counted).
	maxKeptErrors = 20
)

// lineLimit is the line limit in force: MaxLine, smaller in fuzz tests
// so that their over-long lines cost little.
var lineLimit = MaxLine

// Hello is what a stream's first message (a wire.Hello) says of its
// sender; the token stays with the receiver's check of the connection.
type Hello struct {
	// Version is the line format's version (WireVersion).
	Version int
	// K6 is the k6 version of a k6 engine; empty for another engine.
	K6 string
	// Extension names the engine that writes the stream and its version.
	Extension string
	// Shard names the load shard that sends the stream ("1/4": shard 1 of
	// 4, from 0), when it says; a receiver of several shards' streams
	// tells them apart by it.
	Shard string
}

// Summary is everything a stream said.
type Summary struct {
	Hello Hello
	// Windows are merged per start and sorted by it; with a receiver's
	// log, only those not yet moved to it.
	Windows []record.Window
	// Ended is true when the end message arrived: k6 stopped the output
	// cleanly. False after a crashed or killed k6.
	Ended bool
	// Dropped is the count of samples the extension reported it dropped.
	Dropped int64
	// Malformed counts lines that could not be used; Errors holds the first few.
	Malformed int
	Errors    []error
	// Refused counts connections a receiver turned away (no hello, no or
	// wrong token, dropped while waiting, a second stream);
	// RefusedErrors holds the first few, RefusedByReason counts them by
	// reason. Zero for Decode.
	Refused         int
	RefusedErrors   []error
	RefusedByReason map[string]int
	// Streams counts the connections a receiver read as the stream: more
	// than one when the output reconnected. Zero for Decode.
	Streams int
	// LogErr is why windows could not be moved to the receiver's window
	// log (they were kept in memory instead); nil without a log.
	LogErr error
	// CopyErr is why the receiver's copy of the stream (Config.Copy)
	// stopped; nil without one.
	CopyErr error
}

// Decode reads a whole stream, as the output's file sink writes it. The
// error joins the malformed lines' errors (and any read error); the summary
// holds all that could be read either way.
func Decode(r io.Reader) (Summary, error) { return decode(r, false, &state{}) }

// DecodeResults decodes a results file as Decode does, but a line longer
// than MaxLine ends the reading, its error the last (what came before is
// kept): a file is not a connection whose sender goes on sending, and an
// endless one (/dev/zero) would be read through forever.
func DecodeResults(r io.Reader) (Summary, error) { return decode(r, true, &state{}) }

// DecodeResultsTo decodes a results file as DecodeResults does, keeping
// only the metrics keep keeps (nil: all), and moves its windows to log as
// they settle, so that what it holds does not grow with the file's
// length: the summary's Windows are those log could not take (LogErr
// says why). A nil log keeps them all in the summary.
func DecodeResultsTo(r io.Reader, log *WindowLog, keep func(metric string) bool) (Summary, error) {
	return decode(r, true, &state{log: log, keep: keep})
}

func decode(r io.Reader, stopAtLong bool, st *state) (Summary, error) {
	rerr := st.read(r, "", stopAtLong)
	st.settleAll()
	sum := st.summary()
	return sum, errors.Join(append(sum.Errors, rerr)...)
}

// DecodeFile decodes a stream file.
func DecodeFile(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, fmt.Errorf("open stream: %w", err)
	}
	defer f.Close()
	sum, err := Decode(f)
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return sum, err
}

// state accumulates decoded messages; its owner synchronises access.
type state struct {
	hello   Hello
	windows record.WindowSet
	ended   bool
	// ends counts end messages; ended is set once there are wantEnds of
	// them (at least one).
	ends, wantEnds int
	dropped        int64
	malformed      int
	errs           []error
	// onWindow, if set, sees every window message as it arrives.
	onWindow func(record.Window)
	// pending holds window messages for onWindow until the lock is released.
	pending []record.Window
	// log, when set, receives windows as they settle (see settleLag); they
	// are then dropped from windows. logErr is its first failure.
	log    *WindowLog
	logErr error
	newest int64 // latest window start seen, Unix ns
	// keep, when set, says which metrics to keep; others are dropped as
	// they arrive.
	keep func(metric string) bool
}

// settleLag is how far behind the newest window start a window is taken as
// complete and moved to the log. The output sends a window about 2.5 s
// after its second ends; the lag leaves room for several senders whose
// clocks or flushes differ. A window that arrives later still is logged as
// a second entry of its start and merged on reading.
const settleLag = 10 * time.Second

func (st *state) fail(err error) {
	st.malformed++
	if len(st.errs) < maxKeptErrors {
		st.errs = append(st.errs, err)
	}
}

// read feeds every line of r to handle; where prefixes error positions.
// It returns only read errors; malformed lines are recorded in st. With
// stopAtLong, a line longer than lineLimit is the last one read.
func (st *state) read(r io.Reader, where string, stopAtLong bool) error {
	return readLines(r, 1, stopAtLong, func(n int, line []byte, tooLong bool) {
		pos := fmt.Sprintf("%sline %d", where, n)
		switch {
		case tooLong && stopAtLong:
			st.fail(fmt.Errorf("%s: longer than %d bytes: reading stopped there (a results line holds one window, far less)", pos, lineLimit))
		case tooLong:
			st.fail(fmt.Errorf("%s: longer than %d bytes", pos, lineLimit))
		default:
			if err := st.handle(line); err != nil {
				st.fail(fmt.Errorf("%s: %w", pos, err))
			}
		}
	})
}

// readLines calls fn for each line (without its newline), numbered from
// first, skipping the body of lines longer than MaxLine without holding
// it, or, with stopAtLong, ending the reading there (fn is told of that
// line first). A last line without a newline counts.
func readLines(r io.Reader, first int, stopAtLong bool, fn func(n int, line []byte, tooLong bool)) error {
	br := bufio.NewReaderSize(r, readBuf)
	var buf []byte
	tooLong := false
	for n := first; ; {
		chunk, err := br.ReadSlice('\n')
		switch {
		case tooLong:
		case len(buf)+len(chunk) > lineLimit+1:
			tooLong, buf = true, nil
			if stopAtLong {
				fn(n, nil, true)
				return nil
			}
		default:
			buf = appendBounded(buf, chunk)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(buf) > 0 || tooLong {
			fn(n, bytes.TrimRight(buf, "\r\n"), tooLong)
			n++
		}
		buf, tooLong = buf[:0], false
		if cap(buf) > keptLineBuf {
			buf = nil
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read stream at line %d: %w", n, err)
		}
	}
}

// appendBounded appends chunk to buf, growing it by doubling but never
// beyond lineLimit+1 bytes.
func appendBounded(buf, chunk []byte) []byte {
	if need := len(buf) + len(chunk); need > cap(buf) {
		grown := make([]byte, len(buf), min(max(2*cap(buf), need), lineLimit+1))
		copy(grown, buf)
		buf = grown
	}
	return append(buf, chunk...)
}

// handle decodes and applies one line.
func (st *state) handle(line []byte) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return errors.New("empty line")
	}
	var e wire.Envelope
	if err := json.Unmarshal(line, &e); err != nil {
		return fmt.Errorf("not a JSON message: %w", err)
	}
	switch e.Type {
	case wire.TypeHello:
		if e.Version != WireVersion {
			return fmt.Errorf("hello: wire version %d; this harness reads version %d", e.Version, WireVersion)
		}
		st.hello = Hello{Version: e.Version, K6: e.K6, Extension: e.Extension, Shard: e.Shard}
	case wire.TypeWindow:
		start, err := wire.ParseStart(e.Start)
		if err != nil {
			return fmt.Errorf("window: start %q is not an RFC 3339 time: %w", e.Start, err)
		}
		// Series not kept are dropped unchecked: checking costs an inflate.
		var kept []record.Series
		for i := range e.Series {
			if st.keep != nil && !st.keep(e.Series[i].Metric) {
				continue
			}
			s := fromWire(&e.Series[i])
			if err := checkSeries(&s); err != nil {
				return fmt.Errorf("window %s: series %d: %w", e.Start, i, err)
			}
			if kept == nil {
				kept = make([]record.Series, 0, len(e.Series)-i)
			}
			kept = append(kept, s)
		}
		if kept == nil && e.Series != nil {
			kept = []record.Series{} // "series":[] stays empty, not absent
		}
		w := record.Window{Start: start, Series: kept}
		if err := st.windows.Add(w); err != nil {
			return fmt.Errorf("window %s: %w", e.Start, err)
		}
		if st.onWindow != nil {
			st.pending = append(st.pending, w)
		}
		if st.log != nil {
			st.newest = max(st.newest, w.Start.UnixNano())
			st.settle(st.newest - int64(settleLag))
		}
	case wire.TypeEnd:
		if e.Dropped < 0 {
			return fmt.Errorf("end: dropped %d is negative", e.Dropped)
		}
		st.ends++
		st.ended = st.ends >= max(st.wantEnds, 1)
		st.dropped += e.Dropped
	default:
		return fmt.Errorf("unknown message type %q; allowed: hello, window, end", e.Type)
	}
	return nil
}

// checkSeries validates one series of a window message.
func checkSeries(s *record.Series) error {
	if s.Metric == "" {
		return errors.New("no metric name")
	}
	switch s.Kind {
	case record.Trend, record.Counter, record.Rate, record.Gauge:
	default:
		return fmt.Errorf("%s: kind %q; allowed: trend, counter, rate, gauge", s.Metric, s.Kind)
	}
	if s.Count < 0 || s.NonZero < 0 || s.NonZero > s.Count {
		return fmt.Errorf("%s: count %d, nonzero %d; want 0 <= nonzero <= count", s.Metric, s.Count, s.NonZero)
	}
	if s.Hist != "" {
		n, err := record.HistCount(s.Hist)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Metric, err)
		}
		if n != s.Count {
			return fmt.Errorf("%s: histogram holds %d values, count is %d", s.Metric, n, s.Count)
		}
	}
	return nil
}

// summary copies the state out, windows sorted by start and series by key.
func (st *state) summary() Summary {
	sum := Summary{
		Hello:     st.hello,
		Ended:     st.ended,
		Dropped:   st.dropped,
		Malformed: st.malformed,
		Errors:    append([]error(nil), st.errs...),
		Windows:   st.windows.Windows(),
		LogErr:    st.logErr,
	}
	return sum
}

// settleAll moves every window to the log.
func (st *state) settleAll() { st.settle(math.MaxInt64) }

// settle moves the windows that start before cut (Unix ns) to the log, in
// start order, and forgets them. A log failure is kept in logErr and the
// windows stay in memory.
func (st *state) settle(cut int64) {
	if st.log == nil || st.logErr != nil {
		return
	}
	st.logErr = st.windows.Drain(time.Unix(0, cut), st.log.Append)
}
