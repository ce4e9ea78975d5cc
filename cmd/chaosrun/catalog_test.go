package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/scenarios"
)

// runIn runs one command line with the working directory dir.
func runIn(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	st, so, se := testState(t)
	st.Dir = dir
	code = Execute(context.Background(), st, args)
	return code, so.String(), se.String()
}

// TestCatalogCommands: the catalog is listed, shown and validated from a
// folder that holds nothing (no checkout above it), and a wrong name is a
// usage error that lists the names there are.
func TestCatalogCommands(t *testing.T) {
	empty := t.TempDir()
	all := scenarios.All()
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{"list", []string{"catalog", "list"}, exitOK, []string{"NAME", "bank-slow-vault", "a slow vault leaves TransactCheck untouched", "--set bank.bulkheads=off", "off: --set bank.deadlines=off", "--set bank.deadline-propagation=off", "chaosrun run catalog:NAME"}, nil},
		{"show", []string{"catalog", "show", "bank-slow-vault"}, exitOK, []string{"version: 1\nname: bank-slow-vault\n", "engine: native"}, nil},
		{"show with the prefix", []string{"catalog", "show", "catalog:kv-scan-quota"}, exitOK, []string{"name: kv-scan-quota"}, nil},
		{"show unknown", []string{"catalog", "show", "bank-slow"}, exitUsage, nil, []string{`no catalog scenario "bank-slow"`, "allowed: bank-deadlines,", "kv-tier-shedding"}},
		{"show needs a name", []string{"catalog", "show"}, exitUsage, nil, []string{"accepts 1 arg"}},
		{"catalog alone", []string{"catalog"}, exitUsage, nil, []string{"list", "show"}},
		{"validate one", []string{"validate", "catalog:bank-slow-vault"}, exitOK, []string{"catalog:bank-slow-vault: ok (bank-slow-vault: 3 services"}, nil},
		{"validate all", []string{"validate", "catalog:"}, exitOK, []string{"catalog:bank-deadlines: ok", "catalog:kv-tier-shedding: ok"}, nil},
		{"validate unknown", []string{"validate", "catalog:nope"}, exitUsage, nil, []string{`no catalog scenario "nope"`, "bank-slow-vault"}},
		{"run unknown", []string{"run", "catalog:nope"}, exitUsage, nil, []string{`no catalog scenario "nope"`}},
		{"a bad override of a catalog scenario", []string{"validate", "--set", "bank.replicas=99", "catalog:bank-slow-vault"}, exitUsage, nil, []string{"bank.replicas=99", "1 to 16"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, so, se := runIn(t, empty, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, so, se)
			}
			for _, w := range tc.wantStdout {
				if !strings.Contains(so, w) {
					t.Errorf("stdout lacks %q:\n%s", w, so)
				}
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(se, w) {
					t.Errorf("stderr lacks %q:\n%s", w, se)
				}
			}
		})
	}
	if code, so, _ := runIn(t, empty, "validate", "catalog:"); code == exitOK && strings.Count(so, ": ok") != len(all) {
		t.Errorf("validate catalog: validated %d scenarios, the catalog has %d", strings.Count(so, ": ok"), len(all))
	}
}

// TestCatalogSwitchesApply: each entry's switch is a valid override of its
// scenario, and the A/B tests switch each protection off the same way.
func TestCatalogSwitchesApply(t *testing.T) {
	for _, e := range scenarios.All() {
		args := []string{"validate"}
		for _, s := range e.Switch {
			args = append(args, "--set", s)
		}
		if code, _, se := runIn(t, t.TempDir(), append(args, e.Ref())...); code != exitOK {
			t.Errorf("%s: switch %v does not apply: %s", e.Name, e.Switch, se)
		}
	}
	for _, ab := range allCatalogABs() {
		e, err := scenarios.Lookup(ab.scenario)
		if err != nil {
			t.Errorf("A/B test of %s: %v", ab.scenario, err)
			continue
		}
		if !slices.Equal(e.Switch, ab.off) {
			t.Errorf("%s: the catalog switches it off with %v, its A/B test with %v", e.Name, e.Switch, ab.off)
		}
	}
}
