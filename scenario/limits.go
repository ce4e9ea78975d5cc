package scenario

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Bounds of a scenario file, checked while it is read and before YAML
// parses it, so that no input costs more than a few tens of megabytes or
// a fraction of a second. Scenarios are a few kilobytes.
const (
	// MaxFileSize is the largest scenario file, in bytes.
	MaxFileSize = 256 << 10
	// maxNesting bounds how deep collections nest in the text (the
	// decoder's maxDepth bounds it after aliases).
	maxNesting = 64
)

// ReadAll reads a scenario from r, at most MaxFileSize bytes: a longer
// input is an error at the position where it passed the bound, and r is
// not read further (an endless input such as /dev/zero ends there).
func ReadAll(file string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("scenario: %s: %w", file, err)
	}
	if len(data) > MaxFileSize {
		return nil, Errors{tooLarge(file, data)}
	}
	return data, nil
}

func tooLarge(file string, data []byte) *Error {
	line, col := LineCol(data, MaxFileSize)
	return &Error{File: file, Line: line, Col: col, Msg: fmt.Sprintf("the file goes on past %d KiB, the most a scenario file may hold", MaxFileSize>>10)}
}

// LineCol is the 1-based line and column (in characters) of byte i of a
// file's text, as errors give positions.
func LineCol(data []byte, i int) (line, col int) {
	line, start := 1, 0
	for j, c := range data[:i] {
		if c == '\n' {
			line, start = line+1, j+1
		}
	}
	return line, utf8.RuneCount(data[start:i]) + 1
}

// scanText checks what YAML would reject without a position, and what
// would cost too much to parse: the size, UTF-8, the characters YAML
// allows, how deep collections nest and how many values the text holds.
// Each problem is reported at its line and column; the first one stops.
func scanText(file string, data []byte) *Error {
	if len(data) > MaxFileSize {
		return tooLarge(file, data)
	}
	s := textScan{data: data, lineStart: true, literal: -1}
	for s.i < len(data) {
		r, size := utf8.DecodeRune(data[s.i:])
		var err error
		switch {
		case r == utf8.RuneError && size == 1:
			err = errors.New("the file is not UTF-8 text (save it as UTF-8)")
		case !printable(r):
			err = fmt.Errorf("character %U is not allowed in YAML (allowed: tab, newline and printable characters)", r)
		default:
			err = s.step(r)
		}
		if err != nil {
			line, col := LineCol(data, s.i)
			return &Error{File: file, Line: line, Col: col, Msg: err.Error()}
		}
		s.prev = r
		s.i += size
	}
	return nil
}

// printable is YAML's c-printable set.
func printable(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		return true
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000 && r <= 0x10ffff:
		return true
	}
	return false
}

// textScan follows YAML's structure loosely — quotes, comments, block
// scalars, flow and block collections — to bound nesting and count values
// before the parser builds them. It errs on the side of counting more.
type textScan struct {
	data []byte
	i    int
	prev rune // the previous character

	quote     rune // '"' or '\'' inside a quoted scalar
	escaped   bool // after a backslash in double quotes
	comment   bool
	lineStart bool // nothing but blanks so far on this line
	indent    int  // blanks before this line's content
	lead      int  // "- " entries that open this line's content
	atLead    bool // only "- " entries so far on this line
	flow      int  // open flow collections
	indents   []int
	literal   int // block scalar: lines indented more than this are text; -1 when none
	values    int
	sigPrev   rune // the previous character that is not a blank
}

// step takes one character.
func (s *textScan) step(r rune) error {
	if r == '\n' {
		s.comment, s.lineStart, s.indent, s.lead, s.atLead = false, true, 0, 0, false
		return nil
	}
	if s.comment {
		return nil
	}
	if s.lineStart {
		if r == ' ' || r == '\t' {
			s.indent++
			return nil
		}
		s.lineStart = false
		if s.literal >= 0 && s.indent > s.literal {
			s.comment = true // block scalar text: nothing structural to the end of the line
			return nil
		}
		s.literal = -1
		if s.quote == 0 && s.flow == 0 && r != '#' {
			if err := s.block(); err != nil {
				return err
			}
			s.sigPrev, s.atLead = 0, true
		}
	}
	if s.quote != 0 {
		s.inQuote(r)
		return nil
	}
	defer func() {
		if r != ' ' && r != '\t' {
			s.sigPrev = r
		}
	}()
	return s.structural(r)
}

// inQuote follows a quoted scalar to its end.
func (s *textScan) inQuote(r rune) {
	switch {
	case s.escaped:
		s.escaped = false
	case s.quote == '"' && r == '\\':
		s.escaped = true
	case r == s.quote:
		s.quote = 0
	}
}

// block opens the nesting of a line's content at its indentation.
func (s *textScan) block() error {
	for len(s.indents) > 0 && s.indents[len(s.indents)-1] > s.indent {
		s.indents = s.indents[:len(s.indents)-1]
	}
	if len(s.indents) == 0 || s.indents[len(s.indents)-1] < s.indent {
		s.indents = append(s.indents, s.indent)
	}
	return s.deep(len(s.indents))
}

// tokenStart reports whether the character after sigPrev starts a token:
// a quoted scalar, a flow collection or a block scalar may begin there.
func (s *textScan) tokenStart() bool {
	switch s.sigPrev {
	case 0, ':', '-', ',', '[', '{', '?':
		return true
	}
	return false
}

// structural counts what a character outside quotes and comments opens.
func (s *textScan) structural(r rune) error {
	next := s.next()
	blankBefore := s.prev == ' ' || s.prev == '\t' || s.sigPrev == 0
	if r != '-' && r != ' ' && r != '\t' {
		s.atLead = false
	}
	switch {
	case r == '#' && blankBefore:
		s.comment = true
	case (r == '"' || r == '\'') && s.tokenStart():
		s.quote = r
	case (r == '[' || r == '{') && s.tokenStart():
		s.flow++
		return s.value(s.deep(len(s.indents) + s.lead + s.flow))
	case (r == ']' || r == '}') && s.flow > 0:
		s.flow--
	case r == ',' && s.flow > 0:
		return s.value(nil)
	case (r == '|' || r == '>') && s.flow == 0 && s.tokenStart():
		s.literal = s.indent
	case r == '-' && s.atLead && isBlank(next):
		s.lead++
		return s.value(s.deep(len(s.indents) + s.lead))
	case r == ':' && isBlank(next):
		s.values++
		return s.value(nil)
	}
	return nil
}

// next is the byte after the current character; '\n' at the end.
func (s *textScan) next() byte {
	_, size := utf8.DecodeRune(s.data[s.i:])
	if s.i+size < len(s.data) {
		return s.data[s.i+size]
	}
	return '\n'
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// deep refuses nesting beyond maxNesting.
func (s *textScan) deep(depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("collections nest more than %d levels deep here", maxNesting)
	}
	return nil
}

// value counts one more value, unless err already stops the scan.
func (s *textScan) value(err error) error {
	if err != nil {
		return err
	}
	if s.values++; s.values > maxNodes {
		return fmt.Errorf("the file holds more than %d values", maxNodes)
	}
	return nil
}
