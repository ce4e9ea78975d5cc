package clock

import (
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func TestFakeAdvanceFiresInOrder(t *testing.T) {
	f := NewFake(t0)
	c3 := f.After(3 * time.Second)
	c1 := f.After(1 * time.Second)
	c1b := f.After(1 * time.Second)
	c5 := f.After(5 * time.Second)
	if got := f.Pending(); got != 4 {
		t.Fatalf("Pending = %d, want 4", got)
	}
	f.Advance(3 * time.Second)
	for name, tc := range map[string]struct {
		ch   <-chan time.Time
		want time.Time
	}{
		"1s":  {c1, t0.Add(time.Second)},
		"1sb": {c1b, t0.Add(time.Second)},
		"3s":  {c3, t0.Add(3 * time.Second)},
	} {
		select {
		case got := <-tc.ch:
			if !got.Equal(tc.want) {
				t.Errorf("timer %s fired with %v, want %v", name, got, tc.want)
			}
		default:
			t.Errorf("timer %s did not fire", name)
		}
	}
	select {
	case <-c5:
		t.Fatal("5s timer fired after advancing 3s")
	default:
	}
	if got := f.Now(); !got.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("Now = %v, want t0+3s", got)
	}
	if got := f.Pending(); got != 1 {
		t.Errorf("Pending = %d, want 1", got)
	}
}

func TestFakeAfterZeroFiresAtOnce(t *testing.T) {
	f := NewFake(t0)
	select {
	case got := <-f.After(0):
		if !got.Equal(t0) {
			t.Errorf("got %v, want %v", got, t0)
		}
	default:
		t.Fatal("After(0) did not fire at once")
	}
	if f.Pending() != 0 {
		t.Errorf("After(0) left a pending timer")
	}
}

func TestFakeBlockUntil(t *testing.T) {
	f := NewFake(t0)
	done := make(chan time.Time)
	go func() { done <- <-f.After(time.Minute) }()
	f.BlockUntil(1)
	f.Advance(time.Minute)
	select {
	case got := <-done:
		if !got.Equal(t0.Add(time.Minute)) {
			t.Errorf("got %v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("timer did not fire")
	}
}

func TestFakeIsAClock(t *testing.T) {
	var _ Clock = NewFake(t0)
}
