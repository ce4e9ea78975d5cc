package servers

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
)

func TestRegistry(t *testing.T) {
	want := []string{"bankservice", "cachefront", "kvdispatcher", "kvstore", "ledger", "toxiproxy", "vault"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got := Targets(); slices.Contains(got, Toxiproxy) || len(got) != len(want)-1 {
		t.Errorf("Targets() = %v: want every server but %s", got, Toxiproxy)
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
		{"no name", nil, exitcode.Usage, "usage: chaosrun serve NAME  (NAME: bankservice, cachefront, kvdispatcher, kvstore, ledger, toxiproxy, vault)"},
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
