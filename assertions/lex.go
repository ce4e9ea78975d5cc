package assertions

import (
	"math"
	"strconv"
	"strings"
)

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tNum
	tOp
	tLParen
	tRParen
	tStar
	tPlus
	tMinus
	tBad
)

type token struct {
	kind tokKind
	text string
	num  float64
	// col is the 1-based byte column where the token starts.
	col int
	// adjacent says no space separates the token from the one before.
	adjacent bool
}

// lexer splits a check into tokens.
type lexer struct {
	src string
	pos int
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (l *lexer) next() token {
	start := l.pos
	for l.pos < len(l.src) && (l.src[l.pos] == ' ' || l.src[l.pos] == '\t') {
		l.pos++
	}
	adjacent := l.pos == start
	t := token{col: l.pos + 1, adjacent: adjacent}
	if l.pos >= len(l.src) {
		return t
	}
	c := l.src[l.pos]
	switch {
	case isLetter(c):
		end := l.pos
		for end < len(l.src) && (isLetter(l.src[end]) || isDigit(l.src[end])) {
			end++
		}
		t.kind, t.text = tIdent, l.src[l.pos:end]
		l.pos = end
		return t
	case isDigit(c) || c == '.':
		end := l.pos
		for end < len(l.src) && (isDigit(l.src[end]) || l.src[end] == '.') {
			end++
		}
		end = exponent(l.src, end)
		t.text = l.src[l.pos:end]
		l.pos = end
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil || math.IsInf(v, 0) {
			t.kind = tBad
			return t
		}
		t.kind, t.num = tNum, v
		return t
	}
	if strings.HasPrefix(l.src[l.pos:], "===") {
		t.kind, t.text = tOp, "==="
		l.pos += 3
		return t
	}
	two := ""
	if l.pos+1 < len(l.src) {
		two = l.src[l.pos : l.pos+2]
	}
	switch two {
	case "<=", ">=", "==", "!=":
		t.kind, t.text = tOp, two
		l.pos += 2
		return t
	}
	t.text = l.src[l.pos : l.pos+1]
	l.pos++
	switch c {
	case '<', '>':
		t.kind = tOp
	case '(':
		t.kind = tLParen
	case ')':
		t.kind = tRParen
	case '*':
		t.kind = tStar
	case '+':
		t.kind = tPlus
	case '-':
		t.kind = tMinus
	default:
		t.kind = tBad
		// Report a whole UTF-8 character, not one byte of it.
		for l.pos < len(l.src) && l.src[l.pos]&0xC0 == 0x80 {
			l.pos++
		}
		t.text = l.src[t.col-1 : l.pos]
	}
	return t
}

// exponent extends a number ending at end by an exponent ("e3", "E-2"), as
// k6 reads threshold values; an e not followed by digits is left alone
// (a unit, or a mistake the parser names).
func exponent(src string, end int) int {
	if end >= len(src) || (src[end] != 'e' && src[end] != 'E') {
		return end
	}
	i := end + 1
	if i < len(src) && (src[i] == '+' || src[i] == '-') {
		i++
	}
	if i >= len(src) || !isDigit(src[i]) {
		return end
	}
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	return i
}
