package server

import (
	"errors"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// simReq is one request of a simulated run of poolCore.
type simReq struct {
	arrive, service time.Duration
	start           time.Duration // when it got a worker (-1: never)
	err             error         // why it got none
	waited          time.Duration
}

type simEvent struct {
	at   time.Duration
	done bool // a completion; else an arrival
	id   int
}

// simResult is what a simulation saw.
type simResult struct {
	reqs       []simReq
	starts     []int // request ids in start order
	peakBusy   int
	lifoStarts int // starts that skipped an older queued request
	overloaded bool
}

// simulate drives a poolCore with a virtual clock: no goroutines, no sleeps.
func simulate(cfg poolConfig, reqs []simReq) simResult {
	res := simResult{reqs: reqs}
	var evs []simEvent
	for i := range reqs {
		reqs[i].start = -1
		evs = append(evs, simEvent{at: reqs[i].arrive, id: i})
	}
	ids := map[*waiter]int{}
	var now time.Duration
	var core poolCore
	push := func(e simEvent) {
		i := sort.Search(len(evs), func(k int) bool {
			return evs[k].at > e.at || (evs[k].at == e.at && !evs[k].done && e.done)
		})
		evs = append(evs, simEvent{})
		copy(evs[i+1:], evs[i:])
		evs[i] = e
	}
	started := func(id int) {
		reqs[id].start = now
		reqs[id].waited = now - reqs[id].arrive
		res.starts = append(res.starts, id)
		push(simEvent{at: now + reqs[id].service, done: true, id: id})
		res.peakBusy = max(res.peakBusy, core.busy)
	}
	core = poolCore{cfg: cfg, notify: func(w *waiter, err error) {
		id := ids[w]
		if err != nil {
			reqs[id].err, reqs[id].waited = err, now-reqs[id].arrive
			return
		}
		for h := core.head; h != nil; h = h.next {
			if h.enq.Before(w.enq) {
				res.lifoStarts++
				break
			}
		}
		started(id)
	}}
	if core.cfg.Codel.Target == 0 {
		core.cfg.Codel = defaultCodel
	}
	sort.SliceStable(evs, func(a, b int) bool { return evs[a].at < evs[b].at })
	for len(evs) > 0 {
		e := evs[0]
		evs = evs[1:]
		now = e.at
		clock := t0.Add(now)
		if e.done {
			core.release(clock)
		} else {
			adm, err := core.admit(clock)
			switch adm {
			case admitNow:
				started(e.id)
			case refused:
				reqs[e.id].err = err
			case mustQueue:
				w := &waiter{enq: clock}
				ids[w] = e.id
				core.push(w)
			}
		}
		res.overloaded = res.overloaded || core.codel.Overloaded
	}
	return res
}

// arrivals returns n requests arriving every gap, each needing service.
func arrivals(n int, first, gap, service time.Duration) []simReq {
	r := make([]simReq, n)
	for i := range r {
		r[i] = simReq{arrive: first + time.Duration(i)*gap, service: service}
	}
	return r
}

func codelCfg(workers int) poolConfig {
	return poolConfig{Mode: QueueCodel, Workers: workers, QueueTimeout: time.Hour, Codel: defaultCodel}
}

// TestCodelPoolLightLoadIsFIFO: random light load is served in arrival order, nothing dropped.
func TestCodelPoolLightLoadIsFIFO(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var reqs []simReq
		var at time.Duration
		for range 500 { // utilisation ~0.4 on 2 workers, small clumps
			at += time.Duration(rng.ExpFloat64() * float64(ms(2.5)))
			reqs = append(reqs, simReq{arrive: at, service: ms(1 + rng.Float64())})
		}
		res := simulate(codelCfg(2), reqs)
		for i, r := range res.reqs {
			if r.err != nil {
				t.Fatalf("seed %d: request %d (arrived %s) failed: %v", seed, i, r.arrive, r.err)
			}
		}
		if res.lifoStarts != 0 {
			t.Fatalf("seed %d: %d requests started ahead of older ones under light load", seed, res.lifoStarts)
		}
		if res.peakBusy > 2 {
			t.Fatalf("seed %d: %d busy workers, limit 2", seed, res.peakBusy)
		}
	}
}

// TestCodelPoolOverload: at 3× capacity the queue goes LIFO and drops only
// requests that waited more than 2×target; the newest are served quickly.
func TestCodelPoolOverload(t *testing.T) {
	for _, bp := range []bool{false, true} {
		cfg := codelCfg(1)
		cfg.Backpressure, cfg.Watermark = bp, 2
		// capacity 100/s (10 ms each), offered 300/s for 2 s
		res := simulate(cfg, arrivals(600, 0, ms(10.0/3), ms(10)))
		var served, codel, backp, fastGood int
		var maxWait time.Duration
		for i, r := range res.reqs {
			switch {
			case r.err == nil:
				served++
				maxWait = max(maxWait, r.waited)
				if r.waited <= ms(20) {
					fastGood++
				}
			case errors.Is(r.err, errCodel):
				codel++
				if r.waited <= defaultCodel.slough() {
					t.Errorf("bp %v: request %d dropped by codel after only %s (≤ 2×target)", bp, i, r.waited)
				}
			case errors.Is(r.err, errBackpressure):
				backp++
			default:
				t.Errorf("bp %v: request %d: unexpected error %v", bp, i, r.err)
			}
		}
		if !res.overloaded {
			t.Errorf("bp %v: queue never judged overloaded at 3× load", bp)
		}
		if res.lifoStarts == 0 {
			t.Errorf("bp %v: no LIFO service under overload", bp)
		}
		if served < 180 || served > 205 {
			t.Errorf("bp %v: served %d, want about capacity (200 in 2 s)", bp, served)
		}
		// LIFO pulls the interval's minimum down, so overloaded and healthy
		// intervals alternate (as in folly): waits stay within ~an interval.
		if fastGood < served*4/10 || maxWait > ms(150) {
			t.Errorf("bp %v: %d of %d served within 20 ms of arrival, longest wait %s; want ≥ 40%%, ≤ 150ms",
				bp, fastGood, served, maxWait)
		}
		if bp && backp == 0 || !bp && backp != 0 {
			t.Errorf("bp %v: %d back-pressure answers", bp, backp)
		}
		if codel+backp < 300 {
			t.Errorf("bp %v: codel %d + backpressure %d fast failures, want most of the 400 excess", bp, codel, backp)
		}
		if res.peakBusy > 1 {
			t.Errorf("bp %v: peak busy %d > 1 worker", bp, res.peakBusy)
		}
	}
}

// TestFIFOPoolOverload: the bounded FIFO keeps order and refuses only when
// full, so under 3× load every served request waited about a full queue.
func TestFIFOPoolOverload(t *testing.T) {
	cfg := poolConfig{Mode: QueueFIFO, Workers: 1, MaxQueue: 50, QueueTimeout: time.Hour}
	res := simulate(cfg, arrivals(600, 0, ms(10.0/3), ms(10)))
	var full, slow int
	for _, r := range res.reqs {
		if errors.Is(r.err, errQueueFull) {
			full++
		} else if r.err != nil {
			t.Fatalf("unexpected error %v", r.err)
		} else if r.waited > ms(400) {
			slow++
		}
	}
	if res.lifoStarts != 0 {
		t.Errorf("FIFO served %d out of order", res.lifoStarts)
	}
	if full < 300 || slow < 100 {
		t.Errorf("queue-full %d, served after >400ms %d: want a full queue and long waits", full, slow)
	}
}

// TestCodelPoolBurstAbsorbed: a burst shorter than one interval, from an idle
// queue, is served whole and in order as long as it drains within ~2 intervals.
func TestCodelPoolBurstAbsorbed(t *testing.T) {
	const seeds = 200
	deep := 0 // bursts that made someone wait beyond 2×target
	defer func() {
		if deep < seeds*8/10 {
			t.Errorf("only %d of %d bursts queued anyone beyond 2×target; the test proves little", deep, seeds)
		}
	}()
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 2))
		workers := 1 + rng.IntN(4)
		start := time.Duration(rng.IntN(1000)) * time.Millisecond // idle before
		length := ms(1 + rng.Float64()*98)                        // < 100 ms
		var reqs []simReq
		var work time.Duration
		// enough work to keep the queue standing well past target, but drained
		// by the end of the second interval
		for work < time.Duration(workers)*ms(90) {
			r := simReq{arrive: start + time.Duration(rng.Int64N(int64(length))), service: ms(1 + rng.Float64()*9)}
			work += r.service
			reqs = append(reqs, r)
		}
		res := simulate(codelCfg(workers), reqs)
		maxWait := time.Duration(0)
		for i, r := range res.reqs {
			if r.err != nil {
				t.Fatalf("seed %d: burst of %d in %s on %d workers: request %d dropped after %s: %v",
					seed, len(reqs), length, workers, i, r.waited, r.err)
			}
			maxWait = max(maxWait, r.waited)
		}
		if maxWait > defaultCodel.slough() {
			deep++
		}
		if res.lifoStarts != 0 {
			t.Fatalf("seed %d: burst served out of order (%d LIFO starts)", seed, res.lifoStarts)
		}
	}
}

// TestCodelPoolRecovers: after an overload ends the queue returns to FIFO.
func TestCodelPoolRecovers(t *testing.T) {
	reqs := append(arrivals(300, 0, ms(10.0/3), ms(10)), arrivals(100, ms(1500), ms(20), ms(10))...)
	res := simulate(codelCfg(1), reqs)
	for i, r := range res.reqs[300:] {
		if r.err != nil || r.waited > ms(10) {
			t.Errorf("post-overload request %d: err %v waited %s", i, r.err, r.waited)
		}
	}
	tail := res.starts[len(res.starts)-100:]
	for i := 1; i < len(tail); i++ {
		if tail[i] < tail[i-1] {
			t.Fatalf("post-overload starts out of order: %v", tail)
		}
	}
}
