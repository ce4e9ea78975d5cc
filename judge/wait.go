package judge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// waiter waits for a receive-only run's shards and fault events.
type waiter struct {
	o    ReceiveOptions
	sc   *scenario.Scenario
	recv *stream.Receiver
	sink *eventSink
	rec  *record.Run
	t0   time.Time
}

// pollEvery is how often the waiter looks at the shards.
const pollEvery = 100 * time.Millisecond

// wait returns once every shard ended and the fault schedule said done
// (or eventsWait passed), or a bound passed: o.Wait for the first hello,
// then load's planned duration plus o.Margin; or ctx ended. Each bound
// that passes is a problem in the record.
func (w *waiter) wait(ctx context.Context) {
	w.t0 = w.o.now()
	every := w.o.ProgressEvery
	if every <= 0 {
		every = 5 * time.Second
	}
	nextProgress := w.t0.Add(every)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var endedAt time.Time
	for {
		select {
		case <-ctx.Done():
			fail(w.rec, fmt.Errorf("interrupted while waiting for the shards: %v", context.Cause(ctx)))
			return
		case <-tick.C:
		}
		now := w.o.now()
		if now.After(nextProgress) {
			w.progress(now)
			nextProgress = now.Add(every)
		}
		start := w.recv.StartTime()
		if start.IsZero() {
			if now.Sub(w.t0) > w.o.Wait {
				fail(w.rec, fmt.Errorf("no shard said hello within --wait %s", w.o.Wait))
				return
			}
			continue
		}
		if w.endedCount() < w.o.Shards {
			if limit := w.sc.Workload.Duration.Std() + w.o.Margin; now.Sub(start) > limit {
				fail(w.rec, fmt.Errorf("the shards did not all end within load's planned %s + --margin %s", w.sc.Workload.Duration.Std(), w.o.Margin))
				return
			}
			continue
		}
		if endedAt.IsZero() {
			endedAt = now
		}
		reported, done := w.sink.status()
		if done || !reported || len(w.sc.Faults) == 0 {
			return
		}
		if now.Sub(endedAt) > eventsWait {
			w.rec.Problems = append(w.rec.Problems, fmt.Sprintf("the fault reporter did not say its schedule was done within %s of load's end", eventsWait))
			return
		}
	}
}

// endedCount is how many senders sent their end.
func (w *waiter) endedCount() int {
	n := 0
	for _, s := range w.recv.Senders() {
		if !s.Ended.IsZero() {
			n++
		}
	}
	return n
}

// progress prints one line of where the wait stands.
func (w *waiter) progress(now time.Time) {
	if w.o.Progress == nil {
		return
	}
	var streaming, ended []string
	for _, s := range w.recv.Senders() {
		if s.Ended.IsZero() {
			streaming = append(streaming, s.Name())
		} else {
			ended = append(ended, s.Name())
		}
	}
	at := "waiting for the first hello"
	if st := w.recv.StartTime(); !st.IsZero() {
		at = fmt.Sprintf("%s of load", now.Sub(st).Round(time.Second))
	}
	fmt.Fprintf(w.o.Progress, "judge: %s: %d of %d shard(s) connected; streaming: %s; ended: %s; %d fault event(s)\n",
		at, len(streaming)+len(ended), w.o.Shards, list(streaming), list(ended), len(w.sink.list()))
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// shards sets the record's load start and end from the senders, and fails
// a verdict for each shard that never connected or died: its name when
// the shards name themselves, else how many.
func (w *waiter) shards(senders []stream.Sender) {
	rec := w.rec
	rec.Start = w.recv.StartTime()
	for _, s := range senders {
		end := s.Ended
		if end.IsZero() {
			end = s.Last
		}
		if end.After(rec.End) {
			rec.End = end
		}
	}
	if rec.Start.IsZero() {
		rec.End = time.Time{}
	}
	seen, unnamed := map[string]bool{}, 0
	for _, s := range senders {
		if s.Shard == "" {
			unnamed++
		}
		seen[s.Shard] = true
		if s.Ended.IsZero() {
			why := fmt.Sprintf("%s: its stream ended without its end marker (last heard %s into load): the shard died or was cut off", s.Name(), s.Last.Sub(rec.Start).Round(time.Millisecond))
			w.shardFailed(s.Name(), why)
		}
	}
	if missing := w.o.Shards - len(senders); missing > 0 && unnamed > 0 {
		w.shardFailed("shards", fmt.Sprintf("%d of %d shard(s) never connected (the streams that came named no shard, so which is unknown)", missing, w.o.Shards))
		return
	}
	var names []string
	for i := range w.o.Shards {
		if name := fmt.Sprintf("%d/%d", i, w.o.Shards); !seen[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		w.shardFailed("shard "+n, fmt.Sprintf("shard %s never connected: its results are missing", n))
	}
}

// shardFailed marks the record incomplete and adds the shard's failing
// verdict.
func (w *waiter) shardFailed(name, why string) {
	fail(w.rec, fmt.Errorf("%s", why))
	w.rec.Verdicts = append(w.rec.Verdicts, shardVerdict(name, why, w.rec.End.Sub(w.rec.Start)))
}
