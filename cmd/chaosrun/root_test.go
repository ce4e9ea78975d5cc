package main

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/spf13/cobra"
)

// TestFlagsAnywhere: flags after the arguments are flags, not files.
func TestFlagsAnywhere(t *testing.T) {
	good := writeScenario(t, goodScenario)
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"validate, --set after the file", []string{"validate", good, "--set", "bank.bulkheads=off"}, exitOK, "ok (tiny", ""},
		{"validate, a bad --set after the file", []string{"validate", good, "--set", "bank.replicas=99"}, exitUsage, "", "--set bank.replicas=99"},
		{"validate, --set=V between files", []string{"validate", good, "--set=bank.replicas=99", good}, exitUsage, "", "1 to 16"},
		{"run, --testbed after the file", []string{"run", good, "--testbed", "moon"}, exitUsage, "", `--testbed "moon" is not available`},
		{"diff, --confidence after the records", []string{"diff", "a.json", "b.json", "--confidence", "1.5"}, exitUsage, "", "--confidence 1.5: allowed"},
		{"--help after the arguments", []string{"validate", good, "--help"}, exitOK, "Usage:", ""},
		{"-- ends the flags", []string{"validate", "--", "--set"}, exitUsage, "", "--set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, so, se := runCLI(t, tc.args...)
			if code != tc.wantCode || !strings.Contains(so, tc.wantStdout) || !strings.Contains(se, tc.wantStderr) {
				t.Errorf("exit %d, want %d\nstdout (want %q): %s\nstderr (want %q): %s", code, tc.wantCode, tc.wantStdout, so, tc.wantStderr, se)
			}
		})
	}
}

// TestHelpPerCommand: every command, nested ones too, answers --help with
// its usage on stdout and exit 0.
func TestHelpPerCommand(t *testing.T) {
	st, _, _ := testState(t)
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, s := range c.Commands() {
			walk(s, append(append([]string{}, path...), s.Name()))
		}
	}
	walk(newRoot(st), nil)
	if len(paths) < 18 {
		t.Fatalf("only %d commands found: %v", len(paths), paths)
	}
	for _, p := range paths {
		for _, help := range []string{"--help", "-h"} {
			args := append(append([]string{}, p...), help)
			code, so, se := runCLI(t, args...)
			want := strings.TrimSpace("chaosrun " + strings.Join(p, " "))
			if code != exitOK || !strings.Contains(so, "Usage:") || !strings.Contains(so, want) || se != "" {
				t.Errorf("chaosrun %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, so, se)
			}
		}
	}
}

func TestCompletion(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"completion", "bash"}, []string{"__start_chaosrun"}},
		{[]string{"completion", "zsh"}, []string{"#compdef chaosrun"}},
		{[]string{"completion", "fish"}, []string{"complete -c chaosrun"}},
		{[]string{"__complete", "va"}, []string{"validate"}},
		{[]string{"__complete", "run", "--testbed", ""}, []string{"local\ndocker\n"}},
		{[]string{"__complete", "serve", ""}, []string{"bankservice", "toxiproxy"}},
		{[]string{"__complete", "fault", ""}, []string{"add", "apply", "clear", "list"}},
		{[]string{"__complete", "run", "x.yaml", "--lo"}, []string{"--load-shards"}},
	}
	for _, tc := range cases {
		code, so, se := runCLI(t, tc.args...)
		for _, w := range tc.want {
			if code != exitOK || !strings.Contains(so, w) {
				t.Errorf("chaosrun %s: exit %d, stdout lacks %q:\n%.600s\nstderr: %s", strings.Join(tc.args, " "), code, w, so, se)
			}
		}
	}
}

// TestUsageErrors: what the command line gets wrong exits 2 and says what.
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"frobnicate"}, []string{`chaosrun: unknown command "frobnicate"`, "allowed: catalog, clean, completion, diff"}},
		{[]string{"valdate", "x.yaml"}, []string{"did you mean validate?"}},
		{[]string{"--bogus"}, []string{"chaosrun: unknown flag: --bogus"}},
		{[]string{"validate", "--bogus", "x.yaml"}, []string{"chaosrun validate: unknown flag: --bogus", "usage: chaosrun validate", "chaosrun validate --help"}},
		{[]string{"run", "x.yaml", "--seed", "many"}, []string{`invalid argument "many" for "--seed"`}},
		{[]string{"run", "x.yaml", "--set"}, []string{"flag needs an argument: --set"}},
		{[]string{"diff", "one"}, []string{"accepts 2 arg(s), received 1", "usage: chaosrun diff"}},
		{[]string{"fault"}, []string{"Available Commands:"}},
		{[]string{"fault", "bogus"}, []string{`chaosrun fault: unknown command "bogus" (allowed: add, apply, clear, list)`}},
		{[]string{"export", "helm"}, []string{`unknown command "helm" (allowed: k8s)`}},
		{[]string{"schema", "extra"}, []string{`unknown command "extra" for "chaosrun schema"`}},
		{[]string{"serve"}, []string{"usage: chaosrun serve NAME", "kvstore"}},
		{[]string{"images", "--list", "--prune"}, []string{"[list prune] were all set"}},
	}
	for _, tc := range cases {
		code, so, se := runCLI(t, tc.args...)
		for _, w := range tc.want {
			if code != exitUsage || !strings.Contains(se, w) {
				t.Errorf("chaosrun %s: exit %d, want 2; stderr lacks %q:\n%s\nstdout: %.300s", strings.Join(tc.args, " "), code, w, se, so)
			}
		}
	}
}

// TestStateDirAndFS: relative paths resolve against the state's working
// directory and commands read through its filesystem.
func TestStateDirAndFS(t *testing.T) {
	fsys := fstest.MapFS{
		"proj/scenarios/a.yaml":   {Data: []byte(goodScenario)},
		"proj/scenarios/b.yml":    {Data: []byte(strings.Replace(goodScenario, "name: tiny", "name: other", 1))},
		"proj/scenarios/notes.md": {Data: []byte("not a scenario")},
		"proj/empty/.keep":        {},
	}
	cases := []struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{[]string{"validate", "scenarios"}, exitOK, "scenarios/a.yaml: ok (tiny: 2 services, 1 faults, 1 assertions)\nscenarios/b.yml: ok (other", ""},
		{[]string{"validate", "/proj/scenarios/a.yaml"}, exitOK, "/proj/scenarios/a.yaml: ok", ""},
		{[]string{"validate", "nope.yaml"}, exitUsage, "", "nope.yaml: file does not exist"},
		{[]string{"validate", "empty"}, exitUsage, "", "empty: no scenario files (*.yaml, *.yml)"},
	}
	for _, tc := range cases {
		st, so, se := testState(t)
		st.Dir, st.FS = "/proj", fsys
		code := Execute(context.Background(), st, tc.args)
		if code != tc.wantCode || !strings.Contains(so.String(), tc.wantStdout) || !strings.Contains(se.String(), tc.wantStderr) {
			t.Errorf("chaosrun %v: exit %d, want %d\nstdout (want %q): %s\nstderr (want %q): %s", tc.args, code, tc.wantCode, tc.wantStdout, so, tc.wantStderr, se)
		}
	}
}
