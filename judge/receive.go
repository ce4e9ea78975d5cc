package judge

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// ReceiveOptions configure a receive-only judge.
type ReceiveOptions struct {
	// Listen is where the shards stream (HOST:PORT); EventsListen where
	// fault apply reports ("" : the same host, the next port; port 0 when
	// Listen's is 0).
	Listen, EventsListen string
	// Token is required of every stream's hello and every event request.
	Token string
	TLS   *tls.Config
	// Shards is how many load shards stream, each naming itself I/N in
	// its hello (chaosrun load --shard I/N) or, unnamed, counted.
	Shards int
	// Wait bounds the wait for load to start; Margin how long past its
	// planned duration the shards have to end.
	Wait, Margin time.Duration
	// SpillDir holds the window log ("" : the system's temporary folder).
	SpillDir string
	// Progress receives a line every ProgressEvery while waiting.
	Progress      io.Writer
	ProgressEvery time.Duration
	// OnListen is told where the streams and events are received.
	OnListen func(what, addr string)
	// OnRefused sees every refused connection or request.
	OnRefused func(error)
	Versions  map[string]string
	// now is the clock, for tests; nil is time.Now.
	now func() time.Time
}

// DefaultMargin is how long past load's planned duration the shards have
// to send their end.
const DefaultMargin = time.Minute

// eventsWait is how long after load ended the judge waits for the fault
// reporter to say its schedule is done.
var eventsWait = 10 * time.Second

// Receive waits for o.Shards load shards' streams and fault apply's
// events, merges the windows exactly, and judges sc over them. A shard
// that never connects or whose stream ends without its end marker marks
// the record incomplete and fails a verdict that names it. The record's
// windows stay on disk until it is closed.
func Receive(ctx context.Context, sc *scenario.Scenario, o ReceiveOptions) (*record.Run, error) {
	if o.Shards < 1 {
		return nil, fmt.Errorf("--shards %d: want at least 1", o.Shards)
	}
	if o.now == nil {
		o.now = time.Now
	}
	wl, err := stream.CreateWindowLog(o.SpillDir)
	if err != nil {
		return nil, err
	}
	recv, err := stream.ListenWith(ctx, stream.Config{Addr: o.Listen, Token: o.Token, TLS: o.TLS, OnRefused: o.OnRefused,
		Log: wl, Keep: workloads.KeepMetric(sc), Streams: o.Shards, CheckShard: shardCheck(o.Shards)})
	if err != nil {
		wl.Close()
		return nil, err
	}
	sink := newEventSink(o.Token, recv.Started(), recv.StartTime, o.OnRefused)
	evAddr, err := eventsAddr(o.Listen, recv.Addr(), o.EventsListen)
	var stopEvents func()
	if err == nil {
		evAddr, stopEvents, err = serveEvents(ctx, evAddr, o.TLS, sink)
	}
	if err != nil {
		recv.Close()
		wl.Close()
		return nil, err
	}
	defer stopEvents()
	if o.OnListen != nil {
		o.OnListen("results streams", recv.Addr())
		o.OnListen("fault events", evAddr)
	}
	rec := newRecord(sc, o.Versions)
	w := &waiter{o: o, sc: sc, recv: recv, sink: sink, rec: rec}
	w.wait(ctx)
	recv.Close()
	sum := recv.Summary()
	rec.Source = stream.Spilled{Logs: stream.WindowLogs{wl}, Held: sum.Windows}
	rec.Problems = append(rec.Problems, notes(sum)...)
	if sum.LogErr != nil {
		fail(rec, fmt.Errorf("results: %w", sum.LogErr))
	}
	w.shards(recv.Senders())
	events := sink.list()
	if n := sink.refusedCount(); n > 0 {
		rec.Problems = append(rec.Problems, fmt.Sprintf("events endpoint: refused %d request(s) without the token", n))
	}
	if len(sc.Faults) > 0 {
		if reported, _ := sink.status(); !reported {
			rec.Problems = append(rec.Problems, "no fault events came: no `chaosrun fault apply --report-to` reached the events endpoint, so no fault was applied as far as the judge knows")
		}
	}
	rec.Timings.Load = record.Duration(rec.End.Sub(rec.Start))
	Fill(sc, rec, events, false)
	return rec, nil
}

// eventsAddr is where the events endpoint listens: given, or the streams'
// host with the next port (a free one when that is 0).
func eventsAddr(listen, bound, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	host, port, err := net.SplitHostPort(listen)
	if listen == "" {
		host, port, err = "127.0.0.1", "0", nil
	}
	if err != nil {
		return "", err
	}
	if port == "0" {
		return net.JoinHostPort(host, "0"), nil
	}
	_, bp, _ := net.SplitHostPort(bound)
	p, _ := strconv.Atoi(bp)
	return net.JoinHostPort(host, strconv.Itoa(p+1)), nil
}

// shardCheck accepts shard names I/N with this judge's N.
func shardCheck(n int) func(string) error {
	return func(name string) error {
		i, c, ok := strings.Cut(name, "/")
		idx, err1 := strconv.Atoi(i)
		count, err2 := strconv.Atoi(c)
		if !ok || err1 != nil || err2 != nil || count != n || idx < 0 || idx >= n {
			return fmt.Errorf("this judge waits for %d shard(s), named 0/%d to %d/%d", n, n, n-1, n)
		}
		return nil
	}
}

// notes are the stream's problems for the record.
func notes(sum stream.Summary) []string {
	var out []string
	if sum.Malformed > 0 {
		out = append(out, fmt.Sprintf("results streams: %d malformed lines ignored (first: %v)", sum.Malformed, sum.Errors[0]))
	}
	if sum.Refused > 0 {
		out = append(out, fmt.Sprintf("results streams: refused %d connection(s) (first: %v)", sum.Refused, sum.RefusedErrors[0]))
	}
	if sum.Dropped > 0 {
		out = append(out, fmt.Sprintf("results streams: the outputs dropped %d samples", sum.Dropped))
	}
	return out
}
