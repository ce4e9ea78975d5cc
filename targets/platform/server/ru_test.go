package server

import (
	"testing"
	"time"
)

func TestRUFormulas(t *testing.T) {
	w := RUWeights{Read: 1.0 / 4096, Write: 2, Latency: 0.1}
	tests := []struct {
		name string
		got  MilliRU
		want float64
	}{
		{"read empty, instant", w.readCost(0, 0), 1},
		{"read 4 KiB", w.readCost(4096, 0), 2},
		{"read 100 KiB in 20ms", w.readCost(100*1024, 20*time.Millisecond), 1 + 25 + 2},
		{"read base only", w.ReadBase(), 1},
		{"read after", w.ReadAfter(8192, 10*time.Millisecond), 2 + 1},
		{"write empty", w.writeCost(0, 0), 6},
		{"write 8 KiB", w.writeCost(8192, 0), 6 + 2*2},
		{"write 1 KiB in 5ms", w.writeCost(1024, 5*time.Millisecond), 6 + 0.5 + 0.5},
		{"write after", w.WriteAfter(30 * time.Millisecond), 3},
	}
	for _, tt := range tests {
		if got := tt.got.Float(); got < tt.want-0.0011 || got > tt.want+0.0011 {
			t.Errorf("%s: %v RU, want %v", tt.name, got, tt.want)
		}
	}
	if err := (RUWeights{Read: -1}).Validate(); err == nil {
		t.Error("negative read weight: want an error")
	}
	if err := DefaultRUWeights().Validate(); err != nil {
		t.Error(err)
	}
}

func TestRUBuckets(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ep := 100 * time.Millisecond
	b, err := NewRUBuckets(RU(10), RU(20), ep)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		at      time.Duration
		admit   bool // Admit (else Charge)
		cost    float64
		ok      bool
		balance float64
	}{
		{"new caller starts full", 0, true, 5, true, 15},
		{"a big charge after the answer", 0, false, 30, false, -15},
		{"empty bucket refuses", 50 * time.Millisecond, true, 1, false, -15},
		{"one epoch pays back 10", ep, true, 1, false, -5},
		{"two epochs: positive again", 2 * ep, true, 1, true, 4},
		{"refill caps at burst", 50 * ep, true, 0, true, 20},
		{"a long gap does not overflow", 1000000 * ep, true, 1, true, 19},
	}
	for _, s := range steps {
		now := t0.Add(s.at)
		var ok bool
		var bal MilliRU
		if s.admit {
			ok, bal = b.Admit("c", now, RU(s.cost))
		} else {
			bal = b.Charge("c", now, RU(s.cost))
		}
		if s.admit && ok != s.ok || bal != RU(s.balance) {
			t.Fatalf("%s: ok %v balance %v, want %v %v", s.name, ok, bal.Float(), s.ok, s.balance)
		}
	}
	if ok, _ := b.Admit("other", t0, RU(1)); !ok {
		t.Error("callers share a bucket; want one each")
	}
	for _, bad := range [][3]float64{{0, 1, 1}, {2, 1, 1}, {1, 1, 0}} {
		if _, err := NewRUBuckets(RU(bad[0]), RU(bad[1]), time.Duration(bad[2])); err == nil {
			t.Errorf("NewRUBuckets%v: want an error", bad)
		}
	}
}

func BenchmarkRUAdmitCharge(b *testing.B) {
	bk, _ := NewRUBuckets(RU(1e9), RU(1e9), time.Second)
	w := DefaultRUWeights()
	now := time.Unix(0, 0)
	b.ReportAllocs()
	for b.Loop() {
		bk.Admit("caller", now, w.ReadBase())
		bk.Charge("caller", now, w.ReadAfter(1024, time.Millisecond))
	}
}
