package native

import (
	"container/heap"
	"context"
	"time"
)

// pending is a lane's next arrival.
type pending struct {
	l  *lane
	c  uint64        // this shard's count of the lane's arrivals so far
	g  uint64        // the arrival's index in the stream
	at time.Duration // when it is due, from the start
}

// queue orders lanes by their next arrival.
type queue []*pending

func (q queue) Len() int           { return len(q) }
func (q queue) Less(i, j int) bool { return q[i].at < q[j].at }
func (q queue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)        { *q = append(*q, x.(*pending)) }
func (q *queue) Pop() any {
	old := *q
	p := old[len(old)-1]
	*q = old[:len(old)-1]
	return p
}

// next moves p to this shard's next arrival; false when there is none.
func (p *pending) next(sh Shard) bool {
	p.g = p.c*uint64(sh.Count) + uint64(sh.Index)
	at, ok := p.l.sched.At(p.g)
	p.at = at
	return ok
}

// dispatch hands every arrival, when it is due, to a free worker of its
// stream, or counts it dropped when none is free; it never waits for one.
// Between arrivals it sleeps on a precise timer that holds no thread
// (sleeper).
func (e *engine) dispatch(ctx context.Context) {
	q := queue{}
	for _, l := range e.lanes {
		if p := (&pending{l: l}); p.next(e.shard) {
			q = append(q, p)
		}
	}
	heap.Init(&q)
	var scratch []draw
	for _, l := range e.lanes {
		scratch = append(scratch, newDraw(l, e.spec.Seed))
	}
	sl := newSleeper()
	defer sl.close()
	var woke time.Duration // when the dispatcher last woke, from the start
	for n := 0; len(q) > 0; n++ {
		p := q[0]
		if wait := p.at - time.Since(e.start); wait > 0 {
			// Arrivals closer together than batchWindow go out together,
			// up to batchWindow late (late counts in their latency).
			if !sleepUntil(ctx, sl, e.start, max(p.at, woke+batchWindow)) {
				return
			}
			woke = time.Since(e.start)
		} else if n%256 == 0 && ctx.Err() != nil {
			return
		}
		due := e.start.Add(p.at).UnixNano()
		// A worker is free when it holds no job: the job waits for it in
		// the channel (which never fills) only as long as it takes to be
		// scheduled, and that wait counts in its latency.
		if b := p.l.busy.Add(1); b <= p.l.nworkers {
			if b > p.l.started {
				e.startWorker(p.l)
			}
			p.l.jobs <- job{g: p.g, due: due}
		} else {
			p.l.busy.Add(-1)
			d := &scratch[p.l.idx]
			v := p.l.prepareDraw(d, p.g)
			e.drops.add(event{kind: evDrop, t: due, stream: uint16(p.l.idx), variant: v})
		}
		p.c++
		if p.next(e.shard) {
			heap.Fix(&q, 0)
		} else {
			heap.Pop(&q)
		}
	}
}

// batchWindow is the least time between two wakes of the dispatcher: at
// high rates arrivals go out in batches, which costs a thread wake per
// batch instead of one per arrival.
const batchWindow = 250 * time.Microsecond

// sleepUntil sleeps until at (from start), in slices so that ctx can end
// it; false when ctx ended.
func sleepUntil(ctx context.Context, sl *sleeper, start time.Time, at time.Duration) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		d := at - time.Since(start)
		if d <= 0 {
			return true
		}
		sl.sleep(min(d, 20*time.Millisecond))
	}
}
