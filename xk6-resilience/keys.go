package resilience

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// rng is a seeded PCG generator; drawing from it does not allocate.
type rng struct{ pcg rand.PCG }

func newRNG(seed uint64) rng {
	return rng{pcg: *rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)}
}

// float64 returns a uniform value in [0, 1).
func (r *rng) float64() float64 { return float64(r.pcg.Uint64()>>11) * 0x1p-53 }

// intn returns a value in [0, n), n > 0, by multiply-shift (bias < n/2^64).
func (r *rng) intn(n uint64) uint64 {
	hi, _ := bits.Mul64(r.pcg.Uint64(), n)
	return hi
}

// Key stream kinds.
const (
	StreamUniform = "uniform"
	StreamZipf    = "zipf"
	StreamHotset  = "hotset"
	StreamBot     = "bot"
)

// Key classes a stream reports for its last key.
const (
	ClassHot  = "hot"
	ClassCold = "cold"
	ClassBot  = "bot"
)

// StreamConfig describes a key stream.
type StreamConfig struct {
	Kind string
	// N is the key space: keys are indices 0..N-1.
	N uint64
	// S is the Zipf exponent (> 0; 1 is allowed).
	S float64
	// HotKeys and HotFraction: the hot set is keys 0..HotKeys-1 and gets
	// HotFraction of draws (hotset). For zipf and uniform, keys below HotKeys
	// are reported as class "hot".
	HotKeys     uint64
	HotFraction float64
	// Key is the bot stream's single key index.
	Key uint64
	// Seed makes the stream replayable.
	Seed uint64
}

// Validate reports the first invalid field.
func (c StreamConfig) Validate() error {
	switch c.Kind {
	case StreamUniform, StreamZipf, StreamHotset, StreamBot:
	default:
		return fmt.Errorf("key stream %q: allowed: uniform, zipf, hotset, bot", c.Kind)
	}
	if c.Kind != StreamBot && (c.N < 1 || c.N > 1<<40) {
		return fmt.Errorf("%s key stream: n %d: allowed 1..2^40", c.Kind, c.N)
	}
	if c.Kind == StreamZipf && (!(c.S > 0) || c.S > 20) {
		return fmt.Errorf("zipf key stream: s %v: allowed (0, 20]", c.S)
	}
	if c.Kind == StreamHotset {
		if c.HotKeys < 1 || c.HotKeys > c.N {
			return fmt.Errorf("hotset key stream: hot keys %d: allowed 1..n (%d)", c.HotKeys, c.N)
		}
		if !(c.HotFraction >= 0 && c.HotFraction <= 1) {
			return fmt.Errorf("hotset key stream: hot fraction %v: allowed 0..1", c.HotFraction)
		}
	}
	return nil
}

// Stream draws key indices. Next does not allocate. Not safe for concurrent use.
type Stream struct {
	cfg  StreamConfig
	rng  rng
	zipf zipf
	last uint64
}

// NewStream returns a stream of cfg.
func NewStream(cfg StreamConfig) (*Stream, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Stream{cfg: cfg, rng: newRNG(cfg.Seed)}
	if cfg.Kind == StreamZipf {
		s.zipf = newZipf(cfg.N, cfg.S)
	}
	return s, nil
}

// Config returns the stream's configuration.
func (s *Stream) Config() StreamConfig { return s.cfg }

// Next returns the next key index.
func (s *Stream) Next() uint64 {
	var k uint64
	switch s.cfg.Kind {
	case StreamUniform:
		k = s.rng.intn(s.cfg.N)
	case StreamZipf:
		k = s.zipf.sample(&s.rng)
	case StreamHotset:
		if s.rng.float64() < s.cfg.HotFraction || s.cfg.HotKeys == s.cfg.N {
			k = s.rng.intn(s.cfg.HotKeys)
		} else {
			k = s.cfg.HotKeys + s.rng.intn(s.cfg.N-s.cfg.HotKeys)
		}
	case StreamBot:
		k = s.cfg.Key
	}
	s.last = k
	return k
}

// Class returns the class of the last key: bot, hot or cold.
func (s *Stream) Class() string {
	switch {
	case s.cfg.Kind == StreamBot:
		return ClassBot
	case s.last < s.cfg.HotKeys:
		return ClassHot
	}
	return ClassCold
}

// zipf samples ranks 1..n with P(k) ∝ k^-s by rejection-inversion
// (Hörmann and Derflinger 1996), for any s > 0, in O(1) memory.
type zipf struct {
	n, s              float64
	hx1, hn, shortcut float64
}

func newZipf(n uint64, s float64) zipf {
	z := zipf{n: float64(n), s: s}
	z.hx1 = z.hIntegral(1.5) - 1
	z.hn = z.hIntegral(z.n + 0.5)
	z.shortcut = 2 - z.hIntegralInv(z.hIntegral(2.5)-z.h(2))
	return z
}

// sample returns a key index in [0, n): rank-1.
func (z *zipf) sample(r *rng) uint64 {
	for {
		u := z.hn + r.float64()*(z.hx1-z.hn)
		x := z.hIntegralInv(u)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.n {
			k = z.n
		}
		if k-x <= z.shortcut || u >= z.hIntegral(k+0.5)-z.h(k) {
			return uint64(k) - 1
		}
	}
}

func (z *zipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

func (z *zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return helper2((1-z.s)*lx) * lx
}

func (z *zipf) hIntegralInv(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1
	}
	return math.Exp(helper1(t) * x)
}

// helper1 is log1p(x)/x, stable near 0.
func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// helper2 is expm1(x)/x, stable near 0.
func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}
