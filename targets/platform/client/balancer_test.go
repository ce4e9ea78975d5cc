package client

import (
	"testing"
	"time"
)

func TestBalancerRoundRobinSkipsEjected(t *testing.T) {
	oc := testOutlierConfig()
	b := newBalancer([]string{"a:1", "b:1", "c:1"}, lbConfig{policy: balanceRoundRobin, outlier: oc, seed: 1}, ot0)
	for range 5 {
		b.done(1, result{oc: outcomeFailure}, ot0) // eject b
	}
	seen := map[int]int{}
	for range 10 {
		i := b.pick(ot0, -1)
		b.done(i, result{oc: outcomeSuccess}, ot0)
		seen[i]++
	}
	if seen[1] != 0 || seen[0] != 5 || seen[2] != 5 {
		t.Errorf("picks = %v, want 5 each of hosts 0 and 2, none of ejected host 1", seen)
	}
	// the ejection ends at 5s: the sweep in pick returns host 1
	seen = map[int]int{}
	for range 3 {
		i := b.pick(ot0.Add(5*time.Second), -1)
		b.done(i, result{oc: outcomeSuccess}, ot0.Add(5*time.Second))
		seen[i]++
	}
	if seen[1] != 1 {
		t.Errorf("after un-ejection picks = %v, want host 1 once in three", seen)
	}
}

func TestBalancerAvoidsPreviousAndBackpressured(t *testing.T) {
	b := newBalancer([]string{"a:1", "b:1"}, lbConfig{policy: balanceRoundRobin, seed: 1}, ot0)
	for range 4 {
		if i := b.pick(ot0, 0); i != 1 {
			t.Fatalf("retry after host 0 picked %d, want 1", i)
		}
		b.done(1, result{oc: outcomeSuccess}, ot0)
	}
	// host 1 asks to back off for 1s: first choices go to host 0
	if i := b.pick(ot0, 0); i != 1 {
		t.Fatalf("retry after host 0 picked %d, want 1", i)
	}
	b.done(1, result{oc: outcomeNeutral, retryAfter: time.Second}, ot0) // a back-pressure answer, Retry-After 1s
	for range 4 {
		if i := b.pick(ot0.Add(500*time.Millisecond), -1); i != 0 {
			t.Fatalf("pick during host 1's Retry-After = %d, want 0", i)
		}
		b.done(0, result{oc: outcomeSuccess}, ot0)
	}
	// a retry after host 0 still goes to host 1 (back-off is a preference, not a ban)
	if i := b.pick(ot0.Add(500*time.Millisecond), 0); i != 1 {
		t.Errorf("retry after host 0 during host 1's back-off picked %d, want 1", i)
	}
}

func TestBalancerPanicModeWhenAllEjected(t *testing.T) {
	oc := testOutlierConfig() // 100% may be ejected
	b := newBalancer([]string{"a:1", "b:1"}, lbConfig{policy: balanceRoundRobin, outlier: oc, seed: 1}, ot0)
	for h := range 2 {
		for range 5 {
			b.done(h, result{oc: outcomeFailure}, ot0)
		}
	}
	if got := len(b.ejectedHosts()); got != 2 {
		t.Fatalf("ejected %d hosts, want 2", got)
	}
	seen := map[int]int{}
	for range 4 {
		i := b.pick(ot0, -1)
		b.done(i, result{oc: outcomeNeutral}, ot0)
		seen[i]++
	}
	if seen[0] != 2 || seen[1] != 2 {
		t.Errorf("panic-mode picks = %v, want both hosts", seen)
	}
}

func TestBalancerP2CPrefersLeastLoaded(t *testing.T) {
	b := newBalancer([]string{"a:1", "b:1"}, lbConfig{policy: balanceP2C, seed: 7}, ot0)
	b.inflight[0] = 10 // host 0 is busy
	for range 20 {
		if i := b.pick(ot0, -1); i != 1 {
			t.Fatalf("p2c picked busy host %d", i)
		}
		b.done(1, result{oc: outcomeSuccess}, ot0)
	}
	// equal load over three hosts: every host gets a fair share
	b = newBalancer([]string{"a:1", "b:1", "c:1"}, lbConfig{policy: balanceP2C, seed: 7}, ot0)
	seen := map[int]int{}
	for range 3000 {
		i := b.pick(ot0, -1)
		b.done(i, result{oc: outcomeSuccess}, ot0)
		seen[i]++
	}
	for h := range 3 {
		if seen[h] < 800 {
			t.Errorf("p2c picks = %v, want each host ≥ 800 of 3000", seen)
		}
	}
}

// TestBalancerEWMAAvoidsSlowHost: three hosts answer in 2 ms but host 2 in
// 120 ms. From its first slow answer on it loses every choice against a fast
// host; its record fades with time (10 s decay) and after about ln(60)·10 s
// it is tried again, answering fast by then.
func TestBalancerEWMAAvoidsSlowHost(t *testing.T) {
	b := newBalancer([]string{"a:1", "b:1", "c:1"}, lbConfig{policy: balanceEWMA, decay: 10 * time.Second, seed: 3}, ot0)
	rtt := []time.Duration{2 * time.Millisecond, 2 * time.Millisecond, 120 * time.Millisecond}
	now := ot0
	step := func(n int) map[int]int { // n sequential calls, 10 ms apart
		seen := map[int]int{}
		for range n {
			i := b.pick(now, -1)
			now = now.Add(rtt[i])
			b.done(i, result{oc: outcomeSuccess, rtt: rtt[i], timed: true}, now)
			now = now.Add(10 * time.Millisecond)
			seen[i]++
		}
		return seen
	}
	first := step(300)
	if first[2] > 1 {
		t.Errorf("picks %v: the slow host was taken %d times, want at most once (its first answer)", first, first[2])
	}
	if first[0] < 100 || first[1] < 100 {
		t.Errorf("picks %v: the fast hosts should share the load", first)
	}
	// 45 s later without a call to host 2 its record has faded below 2 ms
	now = now.Add(45 * time.Second)
	rtt[2] = 2 * time.Millisecond // and it has recovered
	if again := step(300); again[2] < 50 {
		t.Errorf("after its record faded host 2 got %d of 300 picks, want a share again", again[2])
	}
}

// TestBalancerEWMAWeighsInflight: equal latency, but a host with calls in
// flight costs more: the idle one is chosen.
func TestBalancerEWMAWeighsInflight(t *testing.T) {
	b := newBalancer([]string{"a:1", "b:1"}, lbConfig{policy: balanceEWMA, seed: 5}, ot0)
	for i := range 2 {
		b.inflight[i]++
		b.done(i, result{oc: outcomeSuccess, rtt: 5 * time.Millisecond, timed: true}, ot0)
	}
	b.inflight[0] = 3
	for range 10 {
		if i := b.pick(ot0, -1); i != 1 {
			t.Fatalf("picked the busy host %d", i)
		}
		b.inflight[1]-- // keep host 1 idle
	}
	// a fast failure or a given-up call is no latency sample
	b.done(1, result{oc: outcomeFailure, rtt: time.Microsecond}, ot0)
	if got := b.lat[1].value(ot0, b.decay); got != float64(5*time.Millisecond) {
		t.Errorf("estimate after an untimed result = %v, want 5ms unchanged", time.Duration(got))
	}
}

// TestBalancerPickAllocatesNothing: a pick and its done, with outlier
// detection sweeping, cost no allocation under any policy.
func TestBalancerPickAllocatesNothing(t *testing.T) {
	for _, policy := range []string{balanceEWMA, balanceP2C, balanceRoundRobin} {
		b := newBalancer([]string{"a:1", "b:1", "c:1"}, lbConfig{policy: policy, outlier: defaultOutlierConfig(), seed: 1}, ot0)
		now := ot0
		allocs := testing.AllocsPerRun(2000, func() {
			now = now.Add(time.Millisecond) // a sweep every 1000 picks
			i := b.pick(now, -1)
			b.done(i, result{oc: outcomeSuccess, rtt: time.Millisecond, timed: true}, now)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per pick, want 0", policy, allocs)
		}
	}
}

func TestParseBalancer(t *testing.T) {
	for _, s := range []string{"ewma", "rr", "p2c"} {
		if _, err := parseBalancer(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := parseBalancer("random"); err == nil {
		t.Error("random: no error")
	}
}
