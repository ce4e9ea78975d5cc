package scenario

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// String formats the duration as time.Duration does ("1m30s").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalYAML writes the duration as a string with a unit.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalYAML reads a string with a unit, such as "20s" or "1m30s"; a
// bare number is an error.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return fmt.Errorf("line %d: want a duration like 20s or 1m30s, got %s", n.Line, describe(n))
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: want a duration like 20s or 1m30s, got %q", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}
