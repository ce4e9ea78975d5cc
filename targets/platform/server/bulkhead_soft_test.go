package server

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name            string
		mode            BulkheadMode
		fits            bool
		held, shedLimit int
		droppable       bool
		hard, want      bulkheadDecision
	}{
		{"hard fits", BulkheadHard, true, 3, 9, false, admitted, admitted},
		{"hard full", BulkheadHard, false, 10, 9, false, rejected, rejected},
		{"droppable below threshold", BulkheadHard, true, 8, 9, true, admitted, admitted},
		{"droppable at threshold is shed", BulkheadHard, true, 9, 9, true, shed, shed},
		{"critical at threshold admitted", BulkheadHard, true, 9, 9, false, admitted, admitted},
		{"shadow full would reject", BulkheadShadow, false, 10, 9, false, rejected, wouldReject},
		{"shadow shed would reject", BulkheadShadow, true, 9, 9, true, shed, wouldReject},
		{"shadow fits", BulkheadShadow, true, 3, 9, false, admitted, admitted},
		{"off admits all", BulkheadOff, false, 1000, 9, true, rejected, admitted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hard := decide(tt.fits, tt.held, tt.shedLimit, tt.droppable)
			if got := tt.mode.in(hard); hard != tt.hard || got != tt.want {
				t.Errorf("got %v (hard %v), want %v (hard %v)", got, hard, tt.want, tt.hard)
			}
		})
	}
	if shedLimit(10, 0.9) != 9 || shedLimit(10, 0) != 10 || shedLimit(1, 0.5) != 1 {
		t.Errorf("ShedLimit: %d %d %d", shedLimit(10, 0.9), shedLimit(10, 0), shedLimit(1, 0.5))
	}
	for in, want := range map[string]BulkheadMode{"hard": BulkheadHard, "shadow": BulkheadShadow, "observe": BulkheadShadow, "off": BulkheadOff} {
		if got, err := ParseBulkheadMode(in); err != nil || got != want {
			t.Errorf("ParseBulkheadMode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseBulkheadMode("soft"); err == nil {
		t.Error("ParseBulkheadMode(soft): no error")
	}
}

func TestSoftAdmit(t *testing.T) {
	tests := []struct {
		name                                     string
		limit, resvTotal, resv, used, sharedUsed int
		want                                     bool
	}{
		{"own reservation free", 10, 4, 2, 1, 6, true},
		{"reservation used, shared free", 10, 4, 2, 2, 5, true},
		{"reservation used, shared full", 10, 4, 2, 2, 6, false},
		{"no reservation, shared full", 10, 4, 0, 0, 6, false},
		{"no reservation, shared free", 10, 4, 0, 3, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := softAdmit(tt.limit, tt.resvTotal, tt.resv, tt.used, tt.sharedUsed); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSoftBulkheadReservationsHold: a greedy key takes the whole shared pool,
// yet every key still gets its reservation and no more.
func TestSoftBulkheadReservationsHold(t *testing.T) {
	b, err := newSoftBulkhead("ledger", 8, map[string]int{"check": 2, "list": 2}, BulkheadHard, 0, NewMetrics())
	if err != nil {
		t.Fatal(err)
	}
	var rels []func()
	take := func(key string, n int) (ok int) {
		for range n {
			if rel, d := b.acquire(key, false); d.ok() {
				ok++
				rels = append(rels, rel)
			}
		}
		return ok
	}
	if got := take("list", 10); got != 6 { // 2 reserved + 4 shared
		t.Errorf("greedy list got %d permits, want 6", got)
	}
	if got := take("batch", 3); got != 0 {
		t.Errorf("unreserved batch got %d with the shared pool taken, want 0", got)
	}
	if got := take("check", 3); got != 2 {
		t.Errorf("check got %d, want its reservation of 2", got)
	}
	if b.inUse() != 8 {
		t.Errorf("inflight %d, want 8 (the limit)", b.inUse())
	}
	for _, r := range rels {
		r()
		r()
	}
	if b.inUse() != 0 || b.inflightOf("list") != 0 {
		t.Errorf("inflight after release %d/%d, want 0", b.inUse(), b.inflightOf("list"))
	}
	if _, err := newSoftBulkhead("x", 3, map[string]int{"a": 2, "b": 2}, BulkheadHard, 0, nil); err == nil {
		t.Error("reservations over the limit were accepted")
	}
}

// TestBulkheadsNeverExceededUnderLoad hammers a hard and a soft bulkhead from
// many goroutines while resizing them at runtime (-race): in flight never
// exceeds the largest limit set, each key's reservation is always honoured.
func TestBulkheadsNeverExceededUnderLoad(t *testing.T) {
	const goroutines, iters, maxLimit = 48, 300, 10
	hard := NewBulkheadMode("hard", 6, BulkheadHard, 0, NewMetrics())
	soft, err := newSoftBulkhead("soft", 8, map[string]int{"a": 2, "b": 2}, BulkheadHard, 0, NewMetrics())
	if err != nil {
		t.Fatal(err)
	}
	var cur, peak [2]atomic.Int64
	var refusedA atomic.Int64 // key a (one goroutine, holding ≤ 1 of its 2 reserved) refused
	stop := make(chan struct{})
	var resizer sync.WaitGroup
	resizer.Go(func() {
		rng := rand.New(rand.NewPCG(1, 1))
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := 4 + rng.IntN(maxLimit-3)
			_ = hard.setLimit(n)
			_ = soft.setLimit(n)
			time.Sleep(200 * time.Microsecond)
		}
	})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			key := []string{"b", "c"}[g%2]
			if g == 0 {
				key = "a" // the only user of a: its reservation must always hold
			}
			for range iters {
				for i, acq := range []func() (func(), bulkheadDecision){
					func() (func(), bulkheadDecision) { return hard.acquireFor(false) },
					func() (func(), bulkheadDecision) { return soft.acquire(key, false) },
				} {
					rel, d := acq()
					if !d.ok() {
						if i == 1 && key == "a" {
							refusedA.Add(1)
						}
						continue
					}
					n := cur[i].Add(1)
					for p := peak[i].Load(); n > p && !peak[i].CompareAndSwap(p, n); p = peak[i].Load() {
					}
					time.Sleep(20 * time.Microsecond)
					cur[i].Add(-1)
					rel()
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	resizer.Wait()
	for i, name := range []string{"hard", "soft"} {
		if p := peak[i].Load(); p > maxLimit || p < 4 {
			t.Errorf("%s: peak in flight %d, want 4..%d", name, p, maxLimit)
		}
	}
	if n := refusedA.Load(); n != 0 {
		t.Errorf("key a was refused %d times while holding at most 1 of its 2 reserved permits", n)
	}
	if hard.inUse() != 0 || soft.inUse() != 0 {
		t.Errorf("in flight after the run: %d, %d", hard.inUse(), soft.inUse())
	}
}

func TestBulkheadResizeAtRuntime(t *testing.T) {
	b := NewBulkheadMode("vault", 4, BulkheadHard, 0, NewMetrics())
	var rels []func()
	for range 4 {
		r, ok := b.TryAcquire()
		if !ok {
			t.Fatal("refused below the limit")
		}
		rels = append(rels, r)
	}
	if err := b.setLimit(2); err != nil {
		t.Fatal(err)
	}
	rels[0]()
	rels[1]()
	if _, ok := b.TryAcquire(); ok {
		t.Error("admitted with 2 in flight after shrinking to 2")
	}
	rels[2]()
	r, ok := b.TryAcquire()
	if !ok {
		t.Error("refused with 1 in flight at limit 2")
	}
	if err := b.setLimit(3); err != nil {
		t.Fatal(err)
	}
	r2, ok := b.TryAcquire()
	if !ok {
		t.Error("refused with 2 in flight after growing to 3")
	}
	for _, f := range []func(){rels[3], r, r2} {
		f()
	}
	if err := b.setLimit(0); err == nil {
		t.Error("limit 0 accepted")
	}
}

// TestBulkheadShedAndShadow: droppable work is shed above 90% of the limit;
// shadow mode admits all and counts what hard mode refused, no more: a call
// it would have refused takes no slot.
func TestBulkheadShedAndShadow(t *testing.T) {
	for _, mode := range []BulkheadMode{BulkheadHard, BulkheadShadow} {
		m := NewMetrics()
		b := NewBulkheadMode("api", 10, mode, 0.9, m)
		var rels []func()
		counts := map[bulkheadDecision]int{}
		// 9 critical, then droppable, critical, droppable, critical
		seq := []bool{false, false, false, false, false, false, false, false, false, true, false, true, false}
		for _, droppable := range seq {
			rel, d := b.acquireFor(droppable)
			counts[d]++
			if d.ok() {
				rels = append(rels, rel)
			}
		}
		switch mode {
		case BulkheadHard: // 9 admitted, droppable shed at 9, critical to 10, then full
			if counts[admitted] != 10 || counts[shed] != 1 || counts[rejected] != 2 || b.inUse() != 10 {
				t.Errorf("hard: %v inflight %d; want 10 admitted, 1 shed, 2 rejected", counts, b.inUse())
			}
		case BulkheadShadow:
			if counts[admitted] != 10 || counts[wouldReject] != 3 || b.inUse() != 13 {
				t.Errorf("shadow: %v inflight %d; want 10 admitted, 3 would-reject, all 13 in flight", counts, b.inUse())
			}
			if got := value(t, m.server.BulkDecisions.WithLabelValues("api", "would-reject")); got != 3 {
				t.Errorf("would-reject counter %v, want 3", got)
			}
			full := value(t, m.server.ShadowRejections.WithLabelValues("bulkhead", "api", "full"))
			sh := value(t, m.server.ShadowRejections.WithLabelValues("bulkhead", "api", "shed"))
			if full != 2 || sh != 1 {
				t.Errorf("shadow rejections: full %v, shed %v; want 2, 1", full, sh)
			}
			if got := value(t, m.bulkRejected.WithLabelValues("api")); got != 0 {
				t.Errorf("shadow mode counted %v real rejections", got)
			}
		}
		for _, r := range rels {
			r()
		}
	}
}

// TestShadowCountsWhatHardRejects drives a hard and a shadow bulkhead (plain
// and soft) with the same seeded sequence of arrivals and departures: every
// call hard mode admits leaves when its turn comes, and shadow mode's
// would-be rejections are exactly hard mode's rejections, call by call.
func TestShadowCountsWhatHardRejects(t *testing.T) {
	type limiter func(key string, droppable bool) (func(), bulkheadDecision)
	plain := func(mode BulkheadMode) limiter {
		b := NewBulkheadMode("api", 8, mode, 0.75, nil)
		return func(_ string, d bool) (func(), bulkheadDecision) { return b.acquireFor(d) }
	}
	soft := func(mode BulkheadMode) limiter {
		b, err := newSoftBulkhead("deps", 8, map[string]int{"a": 2, "b": 2}, mode, 0.75, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b.acquire
	}
	for name, mk := range map[string]func(BulkheadMode) limiter{"plain": plain, "soft": soft} {
		for seed := range uint64(5) {
			hard, shadow := mk(BulkheadHard), mk(BulkheadShadow)
			rnd := rand.New(rand.NewPCG(seed, 1))
			var hardRels, shadowRels []func() // the calls hard mode admitted, in both
			var extra []func()                // calls only shadow mode let run
			for step := range 2000 {
				if len(hardRels) > 0 && rnd.IntN(2) == 0 { // a call hard mode admitted ends
					k := rnd.IntN(len(hardRels))
					hardRels[k]()
					shadowRels[k]()
					hardRels = append(hardRels[:k], hardRels[k+1:]...)
					shadowRels = append(shadowRels[:k], shadowRels[k+1:]...)
					continue
				}
				key, droppable := []string{"a", "b", "c"}[rnd.IntN(3)], rnd.IntN(4) == 0
				hr, hd := hard(key, droppable)
				sr, sd := shadow(key, droppable)
				if hd.ok() != (sd == admitted) {
					t.Fatalf("%s seed %d step %d: hard %v, shadow %v", name, seed, step, hd, sd)
				}
				if hd.ok() {
					hardRels, shadowRels = append(hardRels, hr), append(shadowRels, sr)
				} else if sd == wouldReject {
					extra = append(extra, sr) // runs on, holding no slot hard mode counts
				}
			}
			for _, r := range append(append(hardRels, shadowRels...), extra...) {
				r()
			}
		}
	}
}
