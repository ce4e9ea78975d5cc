package kvdispatcher

import (
	"testing"
	"time"
)

func TestHotKeys(t *testing.T) {
	t0 := time.Unix(100, 0)
	h := newHotKeys(8, 10, time.Second)
	for i := range 9 {
		if h.Observe("p1/a", t0) {
			t.Fatalf("request %d: hot before the threshold", i+1)
		}
	}
	if !h.Observe("p1/a", t0) {
		t.Fatal("10th request in the window: want hot")
	}
	for i := range 50 {
		if h.Observe("p2/cold"+string(rune('a'+i%20)), t0) {
			t.Fatal("a key asked for 3 times is hot")
		}
	}
	// Next window: the key stays hot from its first request.
	if !h.Observe("p1/a", t0.Add(time.Second)) {
		t.Fatal("hot in the last window: want hot at once in the next")
	}
	if got := h.Hot(); len(got) != 1 || got[0] != "p1/a" {
		t.Fatalf("Hot() = %v, want [p1/a]", got)
	}
	// Two quiet windows later it is cold again.
	if h.Observe("p1/a", t0.Add(3*time.Second)) {
		t.Fatal("after a window with one request: want cold")
	}
}
