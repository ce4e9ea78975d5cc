package assertions

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chaosrun/chaosrun/record"
)

// Metric selects series by metric name and tags:
// http_req_duration{api:TransactCheck,status:"200"}; "k:!v" selects series
// whose tag k is not v (or absent).
type Metric struct {
	// Source is where values come from: "" for k6's results windows,
	// "scrape" for the targets' /metrics readings (selector "scrape:NAME").
	Source  string
	Name    string
	Filters []TagFilter
}

// ScrapePrefix marks a selector over the targets' /metrics readings.
const ScrapePrefix = "scrape:"

// TagFilter is one tag condition of a selector.
type TagFilter struct {
	Key, Value string
	// Not selects series whose tag differs from Value (or is absent).
	Not bool
}

// String writes the selector in canonical form.
func (m Metric) String() string {
	name := m.Name
	if m.Source == "scrape" {
		name = ScrapePrefix + name
	}
	if len(m.Filters) == 0 {
		return name
	}
	parts := make([]string, len(m.Filters))
	for i, f := range m.Filters {
		v := f.Value
		if v == "" || strings.ContainsAny(v, `,}"{ !:`) {
			v = strconv.Quote(v)
		}
		if f.Not {
			v = "!" + v
		}
		parts[i] = f.Key + ":" + v
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// Matches reports whether a series has the metric's name and every filter
// holds for its tags. A series without a tag never equals a value.
func (m Metric) Matches(s record.Series) bool {
	if s.Metric != m.Name {
		return false
	}
	for _, f := range m.Filters {
		v, ok := s.Tags[f.Key]
		if f.Not == (ok && v == f.Value) {
			return false
		}
	}
	return true
}

// ParseMetric parses a selector: name, optionally followed by {k:v,...}
// where a value may be "quoted" and a leading ! negates it.
func ParseMetric(sel string) (Metric, error) {
	s := &selScanner{src: sel}
	s.space()
	source := ""
	if strings.HasPrefix(sel[s.pos:], ScrapePrefix) {
		source = "scrape"
		s.pos += len(ScrapePrefix)
	}
	name := s.ident(false)
	if name == "" {
		return Metric{}, s.errorf("expected a metric name (letters, digits, _), found %s", s.found())
	}
	m := Metric{Source: source, Name: name}
	s.space()
	if s.done() {
		return m, nil
	}
	if !s.eat('{') {
		return Metric{}, s.errorf(`expected "{" or the end, found %s`, s.found())
	}
	seen := map[string]bool{}
	for {
		s.space()
		if len(m.Filters) == 0 && s.eat('}') {
			break
		}
		keyCol := s.pos + 1
		key := s.ident(true)
		if key == "" {
			return Metric{}, s.errorf("expected a tag name, found %s", s.found())
		}
		if seen[key] {
			return Metric{}, &ParseError{Col: keyCol, Msg: fmt.Sprintf("tag %q is filtered twice", key)}
		}
		seen[key] = true
		s.space()
		if !s.eat(':') {
			return Metric{}, s.errorf(`expected ":" after tag %q, found %s`, key, s.found())
		}
		s.space()
		f := TagFilter{Key: key, Not: s.eat('!')}
		v, err := s.value()
		if err != nil {
			return Metric{}, err
		}
		f.Value = v
		m.Filters = append(m.Filters, f)
		s.space()
		if s.eat('}') {
			break
		}
		if !s.eat(',') {
			return Metric{}, s.errorf(`expected "," or "}", found %s`, s.found())
		}
	}
	s.space()
	if !s.done() {
		return Metric{}, s.errorf("expected the end of the selector, found %s", s.found())
	}
	return m, nil
}

// ValidateMetric reports whether sel is a well-formed metric selector; the
// scenario loader uses it as a hook.
func ValidateMetric(sel string) error {
	_, err := ParseMetric(sel)
	return err
}

type selScanner struct {
	src string
	pos int
}

func (s *selScanner) done() bool { return s.pos >= len(s.src) }

func (s *selScanner) space() {
	for !s.done() && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
}

func (s *selScanner) eat(c byte) bool {
	if !s.done() && s.src[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// ident reads a name; tag names may also hold '.' and '-'.
func (s *selScanner) ident(tag bool) string {
	start := s.pos
	for !s.done() {
		c := s.src[s.pos]
		ok := isLetter(c) || (s.pos > start && isDigit(c)) || (tag && s.pos > start && (c == '.' || c == '-'))
		if !ok {
			break
		}
		s.pos++
	}
	return s.src[start:s.pos]
}

// value reads a quoted string or a bare run up to ',' or '}'.
func (s *selScanner) value() (string, error) {
	if !s.done() && s.src[s.pos] == '"' {
		start := s.pos
		for i := s.pos + 1; i < len(s.src); i++ {
			switch s.src[i] {
			case '\\':
				i++
			case '"':
				v, err := strconv.Unquote(s.src[start : i+1])
				if err != nil {
					return "", s.errorf("malformed quoted value %s: %v", s.src[start:i+1], err)
				}
				s.pos = i + 1
				return v, nil
			}
		}
		return "", s.errorf("expected a closing \" for the value, found the end")
	}
	start := s.pos
	for !s.done() && s.src[s.pos] != ',' && s.src[s.pos] != '}' && s.src[s.pos] != '"' && s.src[s.pos] != '{' {
		s.pos++
	}
	v := strings.TrimRight(s.src[start:s.pos], " \t")
	if v == "" {
		s.pos = start
		return "", s.errorf("expected a tag value (bare or \"quoted\"), found %s", s.found())
	}
	return v, nil
}

func (s *selScanner) found() string {
	if s.done() {
		return "the end"
	}
	return strconv.Quote(s.src[s.pos : s.pos+1])
}

func (s *selScanner) errorf(format string, args ...any) error {
	return &ParseError{Col: s.pos + 1, Msg: fmt.Sprintf(format, args...)}
}

// ParseThresholdKey reads a key of a k6 script's thresholds,
// name{tag:value,...}, as k6 reads it: the tags between the first "{" and
// the last "}" split at commas, each at its first colon, keys and values
// trimmed of spaces and values of quotes.
func ParseThresholdKey(key string) (Metric, error) {
	open, closing := strings.IndexByte(key, '{'), strings.LastIndexByte(key, '}')
	name := key
	switch {
	case open < 0 && closing < 0:
	case open < 0 || closing < 0:
		return Metric{}, fmt.Errorf("threshold key %q: a curly brace is not matched", key)
	case closing < open || closing != len(key)-1:
		return Metric{}, fmt.Errorf("threshold key %q: expected name{tag:value,...}", key)
	default:
		name = key[:open]
	}
	m := Metric{Name: strings.TrimSpace(name)}
	if m.Name == "" {
		return Metric{}, fmt.Errorf("threshold key %q: no metric name", key)
	}
	if open < 0 {
		return m, nil
	}
	seen := map[string]bool{}
	for kv := range strings.SplitSeq(key[open+1:closing], ",") {
		k, v, _ := strings.Cut(kv, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case k == "":
			return Metric{}, fmt.Errorf("threshold key %q: a tag has no name", key)
		case v == "":
			return Metric{}, fmt.Errorf("threshold key %q: tag %q has no value (name{tag:value})", key, k)
		}
		v = strings.Trim(v, `"'`)
		if seen[k] {
			return Metric{}, fmt.Errorf("threshold key %q: tag %q is given twice", key, k)
		}
		seen[k] = true
		m.Filters = append(m.Filters, TagFilter{Key: k, Value: v})
	}
	return m, nil
}
