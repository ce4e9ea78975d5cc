// Package assertions is the assertion language — k6's threshold grammar,
// with units, baselines and windows added, over a metric selector and a
// window of the run — and its evaluation over a run record, after the run
// or live while it runs. It reads the run record only.
package assertions

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/chaosrun/chaosrun/record"
)

var aggNames = []string{"p(N)", record.AggMed, record.AggAvg, record.AggMin, record.AggMax, record.AggCount, record.AggRate, record.AggValue, record.AggSum}

// Op is a comparison operator.
type Op string

// The comparison operators.
const (
	OpLT Op = "<"
	OpLE Op = "<="
	OpGT Op = ">"
	OpGE Op = ">="
	OpEQ Op = "=="
	// OpSEQ is k6's "===", the same as "==" for numbers.
	OpSEQ Op = "==="
	OpNE  Op = "!="
)

// Holds reports whether "a op b" is true; it is false when either is NaN.
func (o Op) Holds(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	switch o {
	case OpLT:
		return a < b
	case OpLE:
		return a <= b
	case OpGT:
		return a > b
	case OpGE:
		return a >= b
	case OpEQ, OpSEQ:
		return a == b
	case OpNE:
		return a != b
	}
	return false
}

// Check is one parsed check: "Agg Op K * baseline + X", or "Agg Op X" when
// it does not use the baseline.
type Check struct {
	// Src is the check as written.
	Src string
	Agg record.Agg
	Op  Op
	// Baseline says the bound is K × (the same aggregation over the
	// baseline window) + X.
	Baseline bool
	// K multiplies the baseline; 1 when not written.
	K float64
	// X is the constant part of the bound, in milliseconds when Duration.
	X float64
	// Duration says X was written with a duration unit (us, ms, s, m).
	Duration bool
}

// Bound is the value the observed aggregate is compared with, given the
// baseline's aggregate (ignored unless the check uses the baseline).
func (c Check) Bound(baseline float64) float64 {
	if !c.Baseline {
		return c.X
	}
	return c.K*baseline + c.X
}

// ParseError is a malformed check or metric selector.
type ParseError struct {
	// Col is the 1-based byte column of the problem within the expression.
	Col int
	// Msg says what was expected and what was found.
	Msg string
}

func (e *ParseError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// unitMillis converts duration units to milliseconds, k6's unit for time.
var unitMillis = map[string]float64{"us": 0.001, "ms": 1, "s": 1000, "m": 60_000}

const opList = "<, <=, >, >=, ==, ===, !="

// ParseCheck parses a check: k6's threshold grammar ("p(95)<200",
// "rate<0.01", "value===0"; every aggregation, every operator), with
// chaosrun's extensions: duration units ("p(99) < 250ms"), a baseline
// ("p(99.9) <= 1.5 * baseline + 20ms") and sum, plus count and rate for
// every kind. Which aggregation a metric allows is checked when it is
// evaluated (its kind is known then).
func ParseCheck(s string) (Check, error) {
	p := &parser{lex: lexer{src: s}}
	p.next()
	c := Check{Src: s, K: 1}
	var err error
	if c.Agg, err = p.agg(); err != nil {
		return Check{}, err
	}
	if p.tok.kind != tOp {
		return Check{}, p.expected("a comparison operator (" + opList + ")")
	}
	c.Op = Op(p.tok.text)
	p.next()
	if err := p.rhs(&c); err != nil {
		return Check{}, err
	}
	if p.tok.kind != tEOF {
		return Check{}, p.expected("the end of the check")
	}
	return c, nil
}

// ValidateCheck reports whether s is a well-formed check; the scenario
// loader uses it as a hook.
func ValidateCheck(s string) error {
	_, err := ParseCheck(s)
	return err
}

type parser struct {
	lex lexer
	tok token
}

func (p *parser) next() { p.tok = p.lex.next() }

func (p *parser) expected(what string) error {
	found := "the end"
	if p.tok.kind != tEOF {
		found = strconv.Quote(p.tok.text)
	}
	return &ParseError{Col: p.tok.col, Msg: "expected " + what + ", found " + found}
}

func (p *parser) agg() (record.Agg, error) {
	if p.tok.kind != tIdent {
		return record.Agg{}, p.expected("an aggregation (" + strings.Join(aggNames, ", ") + ")")
	}
	name := p.tok.text
	switch name {
	case record.AggMed, record.AggAvg, record.AggMin, record.AggMax, record.AggCount, record.AggRate, record.AggSum, record.AggValue:
		p.next()
		return record.Agg{Func: name}, nil
	case record.AggP:
	default:
		return record.Agg{}, p.expected("an aggregation (" + strings.Join(aggNames, ", ") + ")")
	}
	p.next()
	if p.tok.kind != tLParen {
		return record.Agg{}, p.expected(`"(" after p`)
	}
	p.next()
	if p.tok.kind != tNum {
		return record.Agg{}, p.expected("a percentile in [0, 100]")
	}
	n, col := p.tok.num, p.tok.col
	if !(n >= 0 && n <= 100) {
		return record.Agg{}, &ParseError{Col: col, Msg: fmt.Sprintf("expected a percentile in [0, 100], found %s", p.tok.text)}
	}
	p.next()
	if p.tok.kind != tRParen {
		return record.Agg{}, p.expected(`")"`)
	}
	p.next()
	return record.Agg{Func: record.AggP, P: n}, nil
}

// rhs parses: value | baseline [* K] [± value] | K * baseline [± value].
func (p *parser) rhs(c *Check) error {
	if p.tok.kind == tIdent && p.tok.text == "baseline" {
		c.Baseline = true
		p.next()
		if p.tok.kind == tStar {
			p.next()
			k, err := p.plainNumber("a factor for baseline")
			if err != nil {
				return err
			}
			c.K = k
		}
		return p.offset(c)
	}
	v, isDur, col, err := p.value(c.Agg)
	if err != nil {
		return err
	}
	if p.tok.kind != tStar {
		c.X, c.Duration = v, isDur
		return nil
	}
	if isDur {
		return &ParseError{Col: col, Msg: "expected a plain number as the factor of baseline, found a duration"}
	}
	p.next()
	if p.tok.kind != tIdent || p.tok.text != "baseline" {
		return p.expected(`"baseline" after "*"`)
	}
	p.next()
	c.Baseline, c.K = true, v
	return p.offset(c)
}

// offset parses an optional "+ X" or "- X" after a baseline term.
func (p *parser) offset(c *Check) error {
	if p.tok.kind != tPlus && p.tok.kind != tMinus {
		return nil
	}
	sign := 1.0
	if p.tok.kind == tMinus {
		sign = -1
	}
	p.next()
	v, isDur, _, err := p.value(c.Agg)
	if err != nil {
		return err
	}
	c.X, c.Duration = sign*v, isDur
	return nil
}

// value parses a number with an optional duration unit, converted to ms.
func (p *parser) value(agg record.Agg) (v float64, isDur bool, col int, err error) {
	sign := 1.0
	col = p.tok.col
	switch p.tok.kind {
	case tMinus:
		sign = -1
		p.next()
	case tPlus:
		p.next()
	}
	if p.tok.kind != tNum {
		return 0, false, 0, p.expected("a number, a duration (e.g. 250ms) or baseline")
	}
	v = sign * p.tok.num
	p.next()
	if _, isUnit := unitMillis[p.tok.text]; p.tok.kind == tIdent && (p.tok.adjacent || isUnit) {
		mul, ok := unitMillis[p.tok.text]
		if !ok {
			return 0, false, 0, p.expected("a duration unit (us, ms, s, m)")
		}
		if agg.Func == record.AggCount || agg.Func == record.AggRate {
			return 0, false, 0, &ParseError{Col: p.tok.col, Msg: fmt.Sprintf("expected a plain number for %s, found the duration unit %q", agg, p.tok.text)}
		}
		p.next()
		return v * mul, true, col, nil
	}
	return v, false, col, nil
}

func (p *parser) plainNumber(what string) (float64, error) {
	if p.tok.kind != tNum {
		return 0, p.expected(what)
	}
	v := p.tok.num
	p.next()
	if p.tok.kind == tIdent && p.tok.adjacent {
		return 0, &ParseError{Col: p.tok.col, Msg: fmt.Sprintf("expected a plain number as %s, found the unit %q", what, p.tok.text)}
	}
	return v, nil
}
