package servers

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/servers/names"
)

func TestRegistry(t *testing.T) {
	want := []string{"bankservice", "cachefront", "kvdispatcher", "kvstore", "ledger", "relay", "toxiproxy", "vault"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got := Targets(); !slices.Equal(got, slices.DeleteFunc(Names(), func(n string) bool { return n == Toxiproxy || n == Relay })) {
		t.Errorf("Targets() = %v: want every server but %s and %s", got, Toxiproxy, Relay)
	}
	for _, n := range want {
		if m, ok := Lookup(n); !ok || m == nil {
			t.Errorf("Lookup(%q) = %v, %v", n, m, ok)
		}
	}
	if _, ok := Lookup("mainframe"); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
}

// TestServe: serve's command line, from its arguments to its exit code:
// no name, an unknown one or a server's bad flag exit 2, saying what is
// allowed; a server's --help is no error.
func TestServe(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		said string
	}{
		{"no name", nil, exitcode.Usage, "usage: chaosrun serve NAME  (NAME: bankservice, cachefront, kvdispatcher, kvstore, ledger, relay, toxiproxy, vault)"},
		{"a flag first", []string{"--listen", ":0"}, exitcode.Usage, "usage: chaosrun serve NAME"},
		{"an unknown name", []string{"mainframe"}, exitcode.Usage, `unknown server "mainframe" (allowed: bankservice,`},
		{"a bad flag", []string{"ledger", "--bogus"}, exitcode.Usage, "chaosrun serve ledger: "},
		{"a server's help", []string{"ledger", "-h"}, exitcode.OK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Serve(context.Background(), "chaosrun serve NAME", tt.args, &stdout, &stderr)
			code, said := exitcode.OK, stderr.String()
			if ee, ok := exitcode.As(err); ok {
				code = ee.Code
				if ee.Err != nil {
					said += ee.Err.Error()
				}
			}
			if code != tt.code || !strings.Contains(said, tt.said) {
				t.Fatalf("exit %d saying %q, want %d saying %q", code, said, tt.code, tt.said)
			}
		})
	}
}

// TestTargetFlagsListed keeps names.Flags, which the scenario loader
// checks config: keys against, equal to the flags each target's -h
// prints.
func TestTargetFlagsListed(t *testing.T) {
	for _, target := range Targets() {
		m, _ := Lookup(target)
		var usage bytes.Buffer
		m(context.Background(), []string{"-h"}, &usage, &usage) //nolint:errcheck // -h ends with flag.ErrHelp
		var got []string
		for line := range strings.Lines(usage.String()) {
			if rest, ok := strings.CutPrefix(line, "  -"); ok {
				got = append(got, strings.Fields(rest)[0])
			}
		}
		slices.Sort(got)
		if len(got) == 0 || !slices.Equal(got, names.Flags(target)) {
			t.Errorf("%s -h lists %q; names.Flags has %q", target, got, names.Flags(target))
		}
	}
}
