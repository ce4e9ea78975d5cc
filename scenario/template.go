package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TemplateVars are what the templates of a service's env, command and
// health command stand for, for one instance.
type TemplateVars struct {
	// Port is the port the instance listens on.
	Port int
	// Instance is its name ("ledger" or "ledger.1").
	Instance string
	// Deps maps each dependency to the addresses (host:port) through which
	// the instance reaches it, one per replica.
	Deps map[string][]string
}

// Template names besides dep.NAME.
const (
	tmplPort     = "port"
	tmplInstance = "instance"
	tmplDep      = "dep."
)

// Expand replaces {port}, {instance} and {dep.NAME} in s; {{ is a literal
// {, and a { that does not open a name (letters, digits, _ . -) closed by
// } is kept as it is.
func Expand(s string, vars TemplateVars) (string, error) {
	var b strings.Builder
	err := walkTemplate(s, func(lit string) { b.WriteString(lit) }, func(name string) error {
		switch {
		case name == tmplPort:
			b.WriteString(strconv.Itoa(vars.Port))
		case name == tmplInstance:
			b.WriteString(vars.Instance)
		case strings.HasPrefix(name, tmplDep):
			addrs, ok := vars.Deps[strings.TrimPrefix(name, tmplDep)]
			if !ok {
				return fmt.Errorf("{%s}: no such dependency", name)
			}
			b.WriteString(strings.Join(addrs, ","))
		default:
			return fmt.Errorf("unknown template {%s}", name)
		}
		return nil
	})
	return b.String(), err
}

// ExpandAll expands every string of list.
func ExpandAll(list []string, vars TemplateVars) ([]string, error) {
	out := make([]string, len(list))
	for i, s := range list {
		v, err := Expand(s, vars)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// EscapeTemplate makes s expand to itself: text from a file that chaosrun
// must pass on unchanged (a Compose file's environment).
func EscapeTemplate(s string) string { return strings.ReplaceAll(s, "{", "{{") }

// walkTemplate splits s into literal text and template names.
func walkTemplate(s string, lit func(string), name func(string) error) error {
	for len(s) > 0 {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			lit(s)
			return nil
		}
		lit(s[:i])
		s = s[i:]
		if strings.HasPrefix(s, "{{") {
			lit("{")
			s = s[2:]
			continue
		}
		n := 1
		for n < len(s) && isTemplateChar(s[n]) {
			n++
		}
		if n == 1 || n == len(s) || s[n] != '}' {
			lit("{")
			s = s[1:]
			continue
		}
		if err := name(s[1:n]); err != nil {
			return err
		}
		s = s[n+1:]
	}
	return nil
}

func isTemplateChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// usesTemplate reports whether s names the template name.
func usesTemplate(s, name string) bool {
	found := false
	walkTemplate(s, func(string) {}, func(n string) error { //nolint:errcheck // the callback never fails
		found = found || n == name
		return nil
	})
	return found
}

// templateAllowed lists what a service's templates may name.
func templateAllowed(deps []string) string {
	out := []string{"{" + tmplPort + "}", "{" + tmplInstance + "}"}
	for _, d := range deps {
		out = append(out, "{"+tmplDep+d+"}")
	}
	return strings.Join(out, ", ") + "; {{ for a literal {"
}

// checkTemplate reports the first template in s a service with these
// dependencies cannot expand.
func checkTemplate(s string, deps []string) error {
	return walkTemplate(s, func(string) {}, func(name string) error {
		switch {
		case name == tmplPort || name == tmplInstance:
			return nil
		case strings.HasPrefix(name, tmplDep):
			dep := strings.TrimPrefix(name, tmplDep)
			if slices.Contains(deps, dep) {
				return nil
			}
			return fmt.Errorf("template {%s}: the service does not depend on %q (list it in depends_on)", name, dep)
		}
		return fmt.Errorf("unknown template {%s}", name)
	})
}
