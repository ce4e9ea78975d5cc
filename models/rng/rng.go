// Package rng is the seeded, allocation-free random source the models
// draw from, so that every random choice of a run can be replayed.
package rng

import (
	"math/bits"
	"math/rand/v2"
)

// golden is 2^64/φ, the odd constant of Fibonacci hashing.
const golden = 0x9e3779b97f4a7c15

// RNG is a seeded PCG generator; drawing from it does not allocate. Not
// safe for concurrent use.
type RNG struct{ pcg rand.PCG }

// New returns a generator seeded with seed.
func New(seed uint64) RNG {
	return RNG{pcg: *rand.NewPCG(seed, seed^golden)}
}

// At returns the generator of draw i of a sequence seeded with seed: each
// draw gets its own, so draw i is the same whoever makes it and in whatever
// order (shards of one load take disjoint draws of one sequence).
func At(seed, i uint64) RNG {
	return RNG{pcg: *rand.NewPCG(Mix(seed^golden, i), Mix(i, seed))}
}

// Mix hashes two words into one (the splitmix64 finaliser of their mix).
func Mix(a, b uint64) uint64 {
	x := a ^ (b+1)*golden
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Float64 returns a uniform value in [0, 1).
func (r *RNG) Float64() float64 { return float64(r.pcg.Uint64()>>11) * 0x1p-53 }

// Intn returns a value in [0, n), n > 0, by multiply-shift (bias < n/2^64).
func (r *RNG) Intn(n uint64) uint64 {
	hi, _ := bits.Mul64(r.pcg.Uint64(), n)
	return hi
}
