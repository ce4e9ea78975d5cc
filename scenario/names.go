package scenario

import (
	"fmt"
	"unicode/utf8"
)

// MaxFaultName is the longest fault name, in characters.
const MaxFaultName = 64

// FaultNameAllowed says what a fault name may be.
const FaultNameAllowed = "letters, digits, _, . and -, starting with a letter or digit, at most 64 characters"

// CheckFaultName checks a fault's name: the rule of scenario files, which
// game days apply to the faults injected by hand too.
func CheckFaultName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("a fault needs a name (allowed: %s)", FaultNameAllowed)
	case utf8.RuneCountInString(name) > MaxFaultName:
		return fmt.Errorf("fault name %.20q… is %d characters long (allowed: %s)", name, utf8.RuneCountInString(name), FaultNameAllowed)
	case !faultNamePattern.MatchString(name):
		return fmt.Errorf("invalid fault name %q (allowed: %s)", name, FaultNameAllowed)
	}
	return nil
}
