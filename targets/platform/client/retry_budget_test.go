package client

import (
	"testing"
	"time"
)

func TestRetryBudgetRatio(t *testing.T) {
	b := newRetryBudget(0.1, 0, 10*time.Second)
	for range 100 {
		b.request(ot0)
	}
	allowed := 0
	for range 50 {
		if b.tryRetry(ot0) {
			allowed++
		}
	}
	if allowed != 10 {
		t.Errorf("retries allowed for 100 requests at 10%% = %d, want 10", allowed)
	}
	if reqs, retries := b.window(ot0); reqs != 100 || retries != 10 {
		t.Errorf("window = %d requests, %d retries; want 100, 10", reqs, retries)
	}
}

func TestRetryBudgetMinimum(t *testing.T) {
	b := newRetryBudget(0.1, 3, 10*time.Second)
	b.request(ot0)
	allowed := 0
	for range 10 {
		if b.tryRetry(ot0) {
			allowed++
		}
	}
	if allowed != 3 {
		t.Errorf("retries allowed at low traffic = %d, want the minimum 3", allowed)
	}
}

func TestRetryBudgetSlides(t *testing.T) {
	b := newRetryBudget(0.5, 0, 10*time.Second) // 1s buckets
	for range 10 {
		b.request(ot0)
	}
	for range 5 {
		if !b.tryRetry(ot0.Add(time.Second)) {
			t.Fatal("retry within budget refused")
		}
	}
	if b.tryRetry(ot0.Add(2 * time.Second)) {
		t.Fatal("sixth retry for 10 requests at 50% allowed")
	}
	// at 10s the requests of ot0 have left the window, the retries of 1s not:
	// nothing is allowed until they leave too
	if b.tryRetry(ot0.Add(10 * time.Second)) {
		t.Fatal("retry allowed after the requests left the window")
	}
	for range 4 {
		b.request(ot0.Add(11 * time.Second))
	}
	if !b.tryRetry(ot0.Add(11 * time.Second)) {
		t.Error("retry refused once old retries left the window and new requests came")
	}
	if reqs, retries := b.window(ot0.Add(11 * time.Second)); reqs != 4 || retries != 1 {
		t.Errorf("window at 11s = %d requests, %d retries; want 4, 1", reqs, retries)
	}
}
