package workloads

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestResolveScript(t *testing.T) {
	root := t.TempDir()
	scen := filepath.Join(root, "scenarios")
	bundled := ScriptsDir(root)
	for _, f := range []string{filepath.Join(scen, "beside.js"), filepath.Join(scen, "both.js"), filepath.Join(bundled, "both.js"), filepath.Join(bundled, "bank.js")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("export default function () {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(scen, "dir.js"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(root, "secret.js")
	if err := os.WriteFile(secret, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(scen, "link.js")); err != nil {
		t.Fatal(err)
	}
	scenFile := filepath.Join(scen, "x.yaml")
	cases := []struct {
		name, scenario, script, dir string
		want, wantErr               string
	}{
		{"beside the scenario", scenFile, "beside.js", bundled, filepath.Join(scen, "beside.js"), ""},
		{"beside wins over bundled", scenFile, "both.js", bundled, filepath.Join(scen, "both.js"), ""},
		{"bundled", scenFile, "bank.js", bundled, filepath.Join(bundled, "bank.js"), ""},
		{"bundled without a scenario file", "", "bank.js", bundled, filepath.Join(bundled, "bank.js"), ""},
		{"absolute, inside the bundled scripts", "", filepath.Join(bundled, "bank.js"), bundled, filepath.Join(bundled, "bank.js"), ""},
		{"absolute, elsewhere", scenFile, secret, bundled, "", "secret.js is outside"},
		{"up and out", scenFile, "../../../../../../etc/passwd", bundled, "", "/etc/passwd is outside"},
		{"up and back in", scenFile, "../scenarios/beside.js", bundled, filepath.Join(scen, "beside.js"), ""},
		{"a link out of the folder", scenFile, "link.js", bundled, "", "link.js is outside"},
		{"beside without a scripts folder", scenFile, "beside.js", "", filepath.Join(scen, "beside.js"), ""},
		{"nowhere", scenFile, "gone.js", bundled, "", "workload script gone.js: not found"},
		{"absolute and missing", scenFile, filepath.Join(scen, "gone.js"), bundled, "", "no such file"},
		{"a folder", scenFile, "dir.js", "", "", "is a folder"},
		{"no place to look", "", "bank.js", "", "", "no scenario file and no scripts folder"},
		{"no name", scenFile, "", bundled, "", "no file named"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveScript(tc.scenario, tc.script, tc.dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ResolveScript = %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ResolveScript = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestResolveScriptOfCatalogScenario: a catalog scenario's script comes
// from the bundled scripts, never from the working directory.
func TestResolveScriptOfCatalogScenario(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	if err := os.WriteFile(filepath.Join(wd, "bank.js"), []byte("// not the bundled one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := BundledDir("", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ResolveScript("catalog:bank-slow-vault", "bank.js", dir)
	if err != nil || got != filepath.Join(dir, "bank.js") {
		t.Fatalf("ResolveScript = %q, %v; want the bundled %s", got, err, filepath.Join(dir, "bank.js"))
	}
	if _, err := ResolveScript("catalog:bank-slow-vault", "bank.js", ""); err == nil {
		t.Error("catalog scenario without a scripts folder: want an error, not the working directory's bank.js")
	}
}

// TestBundledDir: without a checkout the embedded scripts are written out,
// byte for byte the folder's; with one, the checkout's folder serves.
func TestBundledDir(t *testing.T) {
	if got, err := BundledDir("/repo", "/cache"); err != nil || got != filepath.Join("/repo", "workloads") {
		t.Errorf("BundledDir(checkout) = %q, %v", got, err)
	}
	dir, err := BundledDir("", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Glob("*.js")
	got, _ := filepath.Glob(filepath.Join(dir, "*.js"))
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("written %d scripts, the folder has %d", len(got), len(want))
	}
	for _, name := range want {
		a, _ := os.ReadFile(name)
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s: written copy differs from the folder's (%v)", name, err)
		}
	}
}

func TestScriptExecutors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"k6's thresholds example: vus and duration", "export const options = { vus: 1, duration: '30s', thresholds: { http_req_duration: ['p(95)<200'] } };", nil},
		{"one scenario", "scenarios: { api: { executor: 'constant-arrival-rate', rate: 100, timeUnit: '1s' } }", []string{"constant-arrival-rate"}},
		{"chosen from the environment", "if (m === 'c') { s.c = { executor: \"constant-vus\" } } else { s.o = { executor: `ramping-arrival-rate` } }\n s.x = {executor:'constant-vus'}",
			[]string{"constant-vus", "ramping-arrival-rate"}},
		{"a comment is scanned too", "// executor: 'per-vu-iterations'\n", []string{"per-vu-iterations"}},
	}
	for _, tt := range tests {
		if got := ScriptExecutors([]byte(tt.src)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func FuzzScriptExecutors(f *testing.F) {
	f.Add([]byte("export const options = { scenarios: { a: { executor: 'constant-vus' } } };"))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, e := range ScriptExecutors(src) {
			if e == "" || !strings.Contains(string(src), e) {
				t.Fatalf("executor %q is not in the script", e)
			}
		}
	})
}
