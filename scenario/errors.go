package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in a scenario, at a position in its file.
type Error struct {
	// File is the scenario file, or "--set KEY=VALUE" for an override.
	File string
	// Line and Col are 1-based; 0 when the problem has no position.
	Line, Col int
	// Field is the path of the offending value, e.g. services.bank.replicas.
	Field string
	// Msg says what is wrong.
	Msg string
	// Allowed says what would be accepted, if there is something to say.
	Allowed string
}

// Error formats the problem as "file:line:col: field: msg (allowed: ...)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch {
	case e.Line > 0 && e.Col > 0:
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	case e.Line > 0:
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Allowed != "" {
		b.WriteString(" (allowed: ")
		b.WriteString(e.Allowed)
		b.WriteString(")")
	}
	return b.String()
}

// Errors is every problem found in a scenario, sorted by position.
type Errors []*Error

// MaxShownErrors is how many problems Errors.Error lists; the rest are
// counted (a long list of one mistake repeated helps no one).
const MaxShownErrors = 20

// Error joins the problems, one a line, the first MaxShownErrors of them.
func (es Errors) Error() string {
	lines := make([]string, 0, min(len(es), MaxShownErrors)+1)
	for _, e := range es[:min(len(es), MaxShownErrors)] {
		lines = append(lines, e.Error())
	}
	if n := len(es) - MaxShownErrors; n > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more problem(s) like these: fix the ones above first", n))
	}
	return strings.Join(lines, "\n")
}

// sort orders problems by file, line and column (keeping the order found
// among equals) and drops exact duplicates.
func (es Errors) sort() Errors {
	seen := make(map[Error]bool, len(es))
	out := make(Errors, 0, len(es))
	for _, e := range es {
		if !seen[*e] {
			seen[*e] = true
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col),
		)
	})
	return out
}

// errOrNil returns es as an error, or nil when there is no problem.
func (es Errors) errOrNil() error {
	if len(es) == 0 {
		return nil
	}
	return es.sort()
}

// allowedList formats names for the "(allowed: ...)" part; "none" when empty.
func allowedList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
