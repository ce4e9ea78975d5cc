package scenario

import (
	"encoding/json"
	"reflect"

	"gopkg.in/yaml.v3"
)

// Checks makes checks of threshold expressions, none aborting (for
// scenarios built in Go).
func Checks(exprs ...string) []Check {
	out := make([]Check, len(exprs))
	for i, e := range exprs {
		out[i] = Check{Threshold: e}
	}
	return out
}

// String is the check's expression.
func (c Check) String() string { return c.Threshold }

// plain says the check is its expression alone, written as a string.
func (c Check) plain() bool { return !c.AbortOnFail && c.DelayAbortEval == 0 }

// MarshalYAML writes a plain check as its expression, else the object.
func (c Check) MarshalYAML() (any, error) {
	if c.plain() {
		return c.Threshold, nil
	}
	type object Check
	return object(c), nil
}

// MarshalJSON writes a plain check as its expression, else the object.
func (c Check) MarshalJSON() ([]byte, error) {
	if c.plain() {
		return json.Marshal(c.Threshold)
	}
	type object Check
	return json.Marshal(object(c))
}

// decodeNode reads an expression (a string) or k6's object form.
func (c *Check) decodeNode(d *decoder, n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.ScalarNode:
		d.value(n, reflect.ValueOf(&c.Threshold).Elem(), path, false)
	case yaml.MappingNode:
		d.structure(n, reflect.ValueOf(c).Elem(), path)
	default:
		d.bad(n, path, checkAllowed, "want a string or a mapping, got %s", describe(n))
	}
}

const checkAllowed = `an expression like "p(99) < 250ms", or {threshold: "p(99) < 250ms", abortOnFail: true, delayAbortEval: 10s}`
