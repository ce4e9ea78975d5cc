package rng

import "testing"

func TestAtIsAFunctionOfSeedAndIndex(t *testing.T) {
	a, b := At(7, 123), At(7, 123)
	if a.Float64() != b.Float64() || a.Intn(1000) != b.Intn(1000) {
		t.Error("At(7, 123) draws differently twice")
	}
	seen := map[float64]bool{}
	for i := range uint64(1000) {
		r := At(7, i)
		seen[r.Float64()] = true
	}
	if len(seen) != 1000 {
		t.Errorf("%d distinct first draws of 1000 indices", len(seen))
	}
	x, y := At(7, 5), At(8, 5)
	if x.Float64() == y.Float64() {
		t.Error("seeds 7 and 8 draw the same")
	}
}

func TestIntnAndFloat64Ranges(t *testing.T) {
	r := New(1)
	for range 10000 {
		if f := r.Float64(); f < 0 || f >= 1 {
			t.Fatalf("Float64 %v outside [0, 1)", f)
		}
		if n := r.Intn(7); n >= 7 {
			t.Fatalf("Intn(7) = %d", n)
		}
	}
	if Mix(1, 2) == Mix(2, 1) {
		t.Error("Mix is symmetric")
	}
}
