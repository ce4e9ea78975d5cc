// Package keys is the key streams: which keys a load's requests touch
// (uniform, Zipf, a hot set, one bot key), drawn reproducibly from a seed.
package keys

import (
	"fmt"
	"math"

	"github.com/chaosrun/chaosrun/models/rng"
)

// Key stream kinds.
const (
	Uniform = "uniform"
	Zipf    = "zipf"
	Hotset  = "hotset"
	Bot     = "bot"
)

// Kinds lists the key stream kinds.
var Kinds = []string{Uniform, Zipf, Hotset, Bot}

// Key classes a stream reports for its last key.
const (
	ClassHot  = "hot"
	ClassCold = "cold"
	ClassBot  = "bot"
)

// Config describes a key stream.
type Config struct {
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
func (c Config) Validate() error {
	switch c.Kind {
	case Uniform, Zipf, Hotset, Bot:
	default:
		return fmt.Errorf("key stream %q: allowed: uniform, zipf, hotset, bot", c.Kind)
	}
	if c.Kind != Bot && (c.N < 1 || c.N > 1<<40) {
		return fmt.Errorf("%s key stream: n %d: allowed 1..2^40", c.Kind, c.N)
	}
	if c.Kind == Zipf && (!(c.S > 0) || c.S > 20) {
		return fmt.Errorf("zipf key stream: s %v: allowed (0, 20]", c.S)
	}
	if c.Kind == Hotset {
		if c.HotKeys < 1 || c.HotKeys > c.N {
			return fmt.Errorf("hotset key stream: hot keys %d: allowed 1..n (%d)", c.HotKeys, c.N)
		}
		if !(c.HotFraction >= 0 && c.HotFraction <= 1) {
			return fmt.Errorf("hotset key stream: hot fraction %v: allowed 0..1", c.HotFraction)
		}
	}
	return nil
}

// Stream draws key indices. Next and At do not allocate; Next is not
// safe for concurrent use.
type Stream struct {
	cfg  Config
	rng  rng.RNG
	zipf zipf
	// last is the key Next drew last.
	last uint64
}

// New returns a stream of cfg.
func New(cfg Config) (*Stream, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Stream{cfg: cfg, rng: rng.New(cfg.Seed)}
	if cfg.Kind == Zipf {
		s.zipf = newZipf(cfg.N, cfg.S)
	}
	return s, nil
}

// Config returns the stream's configuration.
func (s *Stream) Config() Config { return s.cfg }

// Next returns the next key index.
func (s *Stream) Next() uint64 {
	s.last = s.draw(&s.rng)
	return s.last
}

// At returns key index i of the stream's sequence without moving it: draw i
// is the same whoever makes it and in whatever order, so shards of one load
// that take disjoint draws together draw exactly what one engine would.
// Unlike Next, it is safe for concurrent use.
func (s *Stream) At(i uint64) uint64 {
	if s.cfg.Kind == Bot {
		return s.cfg.Key
	}
	r := rng.At(s.cfg.Seed, i)
	return s.draw(&r)
}

func (s *Stream) draw(r *rng.RNG) uint64 {
	switch s.cfg.Kind {
	case Uniform:
		return r.Intn(s.cfg.N)
	case Zipf:
		return s.zipf.sample(r)
	case Hotset:
		if r.Float64() < s.cfg.HotFraction || s.cfg.HotKeys == s.cfg.N {
			return r.Intn(s.cfg.HotKeys)
		}
		return s.cfg.HotKeys + r.Intn(s.cfg.N-s.cfg.HotKeys)
	}
	return s.cfg.Key
}

// Class returns the class of the last key Next drew: bot, hot or cold.
func (s *Stream) Class() string { return s.ClassOf(s.last) }

// ClassOf returns the class of key index k in this stream: bot for a bot
// stream, hot below HotKeys, else cold.
func (s *Stream) ClassOf(k uint64) string {
	switch {
	case s.cfg.Kind == Bot:
		return ClassBot
	case k < s.cfg.HotKeys:
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
func (z *zipf) sample(r *rng.RNG) uint64 {
	for {
		u := z.hn + r.Float64()*(z.hx1-z.hn)
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
