package layout

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// flagPackages are the command-line libraries only cmd/ may import: the
// packages take plain settings and return errors (as in k6).
var flagPackages = []string{"github.com/spf13/cobra", "github.com/spf13/pflag"}

// flagImporters lists the module's packages outside cmd/ whose non-test
// files import cobra or pflag, module-relative and sorted.
func flagImporters(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], module) {
			continue
		}
		pkg := strings.TrimPrefix(f[0], module)
		if under(pkg, "cmd") {
			continue
		}
		if slices.ContainsFunc(f[1:], func(imp string) bool { return slices.Contains(flagPackages, imp) }) {
			got = append(got, pkg)
		}
	}
	slices.Sort(got)
	return got
}

// TestFlagsOnlyInCmd: no package outside cmd/ imports cobra or pflag.
func TestFlagsOnlyInCmd(t *testing.T) {
	for _, p := range flagImporters(t) {
		t.Errorf("%s imports cobra or pflag: flags belong in cmd/chaosrun; the package takes plain settings", p)
	}
}
