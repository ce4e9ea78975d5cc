package servers

import (
	"slices"
	"testing"
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
