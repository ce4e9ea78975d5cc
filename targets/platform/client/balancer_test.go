package client

import (
	"testing"
	"time"
)

func TestBalancerRoundRobinSkipsEjected(t *testing.T) {
	oc := testOutlierConfig()
	b := newBalancer([]string{"a:1", "b:1", "c:1"}, balanceRoundRobin, oc, 1, ot0)
	for range 5 {
		b.done(1, outcomeFailure, 0, ot0) // eject b
	}
	seen := map[int]int{}
	for range 10 {
		i := b.pick(ot0, -1)
		b.done(i, outcomeSuccess, 0, ot0)
		seen[i]++
	}
	if seen[1] != 0 || seen[0] != 5 || seen[2] != 5 {
		t.Errorf("picks = %v, want 5 each of hosts 0 and 2, none of ejected host 1", seen)
	}
	// the ejection ends at 5s: the sweep in pick returns host 1
	seen = map[int]int{}
	for range 3 {
		i := b.pick(ot0.Add(5*time.Second), -1)
		b.done(i, outcomeSuccess, 0, ot0.Add(5*time.Second))
		seen[i]++
	}
	if seen[1] != 1 {
		t.Errorf("after un-ejection picks = %v, want host 1 once in three", seen)
	}
}

func TestBalancerAvoidsPreviousAndBackpressured(t *testing.T) {
	b := newBalancer([]string{"a:1", "b:1"}, balanceRoundRobin, OutlierConfig{}, 1, ot0)
	for range 4 {
		if i := b.pick(ot0, 0); i != 1 {
			t.Fatalf("retry after host 0 picked %d, want 1", i)
		}
		b.done(1, outcomeSuccess, 0, ot0)
	}
	// host 1 asks to back off for 1s: first choices go to host 0
	if i := b.pick(ot0, 0); i != 1 {
		t.Fatalf("retry after host 0 picked %d, want 1", i)
	}
	b.done(1, outcomeNeutral, time.Second, ot0) // a back-pressure answer, Retry-After 1s
	for range 4 {
		if i := b.pick(ot0.Add(500*time.Millisecond), -1); i != 0 {
			t.Fatalf("pick during host 1's Retry-After = %d, want 0", i)
		}
		b.done(0, outcomeSuccess, 0, ot0)
	}
	// a retry after host 0 still goes to host 1 (back-off is a preference, not a ban)
	if i := b.pick(ot0.Add(500*time.Millisecond), 0); i != 1 {
		t.Errorf("retry after host 0 during host 1's back-off picked %d, want 1", i)
	}
}

func TestBalancerPanicModeWhenAllEjected(t *testing.T) {
	oc := testOutlierConfig() // 100% may be ejected
	b := newBalancer([]string{"a:1", "b:1"}, balanceRoundRobin, oc, 1, ot0)
	for h := range 2 {
		for range 5 {
			b.done(h, outcomeFailure, 0, ot0)
		}
	}
	if got := len(b.ejectedHosts()); got != 2 {
		t.Fatalf("ejected %d hosts, want 2", got)
	}
	seen := map[int]int{}
	for range 4 {
		i := b.pick(ot0, -1)
		b.done(i, outcomeNeutral, 0, ot0)
		seen[i]++
	}
	if seen[0] != 2 || seen[1] != 2 {
		t.Errorf("panic-mode picks = %v, want both hosts", seen)
	}
}

func TestBalancerP2CPrefersLeastLoaded(t *testing.T) {
	b := newBalancer([]string{"a:1", "b:1"}, balanceP2C, OutlierConfig{}, 7, ot0)
	b.inflight[0] = 10 // host 0 is busy
	for range 20 {
		if i := b.pick(ot0, -1); i != 1 {
			t.Fatalf("p2c picked busy host %d", i)
		}
		b.done(1, outcomeSuccess, 0, ot0)
	}
	// equal load over three hosts: every host gets a fair share
	b = newBalancer([]string{"a:1", "b:1", "c:1"}, balanceP2C, OutlierConfig{}, 7, ot0)
	seen := map[int]int{}
	for range 3000 {
		i := b.pick(ot0, -1)
		b.done(i, outcomeSuccess, 0, ot0)
		seen[i]++
	}
	for h := range 3 {
		if seen[h] < 800 {
			t.Errorf("p2c picks = %v, want each host ≥ 800 of 3000", seen)
		}
	}
}

func TestParseBalancer(t *testing.T) {
	for _, s := range []string{"rr", "p2c"} {
		if _, err := parseBalancer(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := parseBalancer("random"); err == nil {
		t.Error("random: no error")
	}
}
