package scenario

import "fmt"

// Problem is a problem, found outside this package, with the value at
// field ("workload.script"): it is placed where that value came from (its
// line and column, or its --set flag).
func (s *Scenario) Problem(field, allowed, format string, args ...any) *Error {
	p := metaOf(s).at(field, s.File)
	return &Error{File: p.file, Line: p.line, Col: p.col, Field: field, Msg: fmt.Sprintf(format, args...), Allowed: allowed}
}
