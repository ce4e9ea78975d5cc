package suggest

import (
	"errors"
	"testing"
)

func TestNearest(t *testing.T) {
	flags := []string{"bulkheads", "vault-limit", "vault-bulkhead", "drawer", "ru"}
	for _, tc := range []struct{ in, want string }{
		{"bulkhead", "bulkheads"},
		{"vault-limt", "vault-limit"},
		{"valt-bulkhed", "vault-bulkhead"},
		{"drawers", "drawer"},
		{"rx", "ru"},
		{"zzz", ""},
		{"timeout", ""},
		{"", ""},
	} {
		if got := Nearest(tc.in, flags); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestUnknownFlag(t *testing.T) {
	flags := []string{"testbed", "out-dir", "set"}
	for _, tc := range []struct{ in, want string }{
		{"unknown flag: --tesbed", "unknown flag: --tesbed; did you mean --testbed?"},
		{"unknown flag: --outdir", "unknown flag: --outdir; did you mean --out-dir?"},
		{"unknown flag: --quiet", "unknown flag: --quiet"},
		{"unknown shorthand flag: 'x' in -x", "unknown shorthand flag: 'x' in -x"},
		{`invalid argument "x" for "--seed" flag`, `invalid argument "x" for "--seed" flag`},
	} {
		if got := UnknownFlag(errors.New(tc.in), flags).Error(); got != tc.want {
			t.Errorf("UnknownFlag(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
