package stats

import (
	"math"
	"sort"
)

// P2 estimates one quantile of a stream in constant memory with the P²
// algorithm (Jain & Chlamtac, 1985): five markers whose heights move by
// piecewise-parabolic interpolation. It is not safe for concurrent use.
type P2 struct {
	p     float64
	n     int        // observations seen
	q     [5]float64 // marker heights
	pos   [5]float64 // marker positions (1-based, whole numbers)
	want  [5]float64 // desired positions
	delta [5]float64 // desired position increments
}

// NewP2 returns an estimator of the p-quantile, 0 < p < 1.
func NewP2(p float64) *P2 {
	if !(p > 0 && p < 1) {
		panic("stats.NewP2: p must be in (0, 1)")
	}
	e := &P2{p: p}
	e.Reset()
	return e
}

// Reset forgets every observation.
func (e *P2) Reset() {
	p := e.p
	e.n = 0
	e.q = [5]float64{}
	e.pos = [5]float64{1, 2, 3, 4, 5}
	e.want = [5]float64{1, 1 + 2*p, 1 + 4*p, 3 + 2*p, 5}
	e.delta = [5]float64{0, p / 2, p, (1 + p) / 2, 1}
}

// Count is the number of observations since the last Reset.
func (e *P2) Count() int { return e.n }

// Add observes x.
func (e *P2) Add(x float64) {
	if e.n < 5 {
		e.q[e.n] = x
		e.n++
		if e.n == 5 {
			s := e.q[:]
			sort.Float64s(s)
		}
		return
	}
	e.n++
	var k int
	switch {
	case x < e.q[0]:
		e.q[0] = x
		k = 0
	case x >= e.q[4]:
		e.q[4] = x
		k = 3
	default:
		for k = 0; k < 3 && x >= e.q[k+1]; k++ {
		}
	}
	for i := k + 1; i < 5; i++ {
		e.pos[i]++
	}
	for i := range e.want {
		e.want[i] += e.delta[i]
	}
	for i := 1; i <= 3; i++ {
		d := e.want[i] - e.pos[i]
		if (d >= 1 && e.pos[i+1]-e.pos[i] > 1) || (d <= -1 && e.pos[i-1]-e.pos[i] < -1) {
			s := math.Copysign(1, d)
			h := e.parabolic(i, s)
			if !(e.q[i-1] < h && h < e.q[i+1]) {
				h = e.linear(i, s)
			}
			e.q[i] = h
			e.pos[i] += s
		}
	}
}

func (e *P2) parabolic(i int, d float64) float64 {
	q, n := &e.q, &e.pos
	return q[i] + d/(n[i+1]-n[i-1])*((n[i]-n[i-1]+d)*(q[i+1]-q[i])/(n[i+1]-n[i])+
		(n[i+1]-n[i]-d)*(q[i]-q[i-1])/(n[i]-n[i-1]))
}

func (e *P2) linear(i int, d float64) float64 {
	j := i + int(d)
	return e.q[i] + d*(e.q[j]-e.q[i])/(e.pos[j]-e.pos[i])
}

// Quantile is the current estimate; with fewer than five observations it is
// the exact quantile of those seen, and 0 with none.
func (e *P2) Quantile() float64 {
	if e.n >= 5 {
		return e.q[2]
	}
	if e.n == 0 {
		return 0
	}
	s := make([]float64, e.n)
	copy(s, e.q[:e.n])
	sort.Float64s(s)
	i := int(math.Ceil(e.p*float64(e.n))) - 1
	return s[max(i, 0)]
}

// markers returns the five marker heights (minimum, p/2, p, (1+p)/2, maximum
// estimates) once five observations are in.
func (e *P2) markers() [5]float64 { return e.q }
