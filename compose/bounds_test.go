package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/chaosrun/chaosrun/scenario"
)

// aliasBomb is a 637-byte file whose aliases expand to 9^9 nodes.
func aliasBomb() []byte {
	var b strings.Builder
	b.WriteString("x-a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 'b'; i <= 'i'; i++ {
		fmt.Fprintf(&b, "x-%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	b.WriteString("services:\n  app:\n    image: app:dev\n    labels: *i\n")
	return []byte(b.String())
}

// chainLen is the chain our own checks walk; importedLen the one imported
// whole through compose-go.
const chainLen, importedLen = 10_000, 2_000

// chain is a project of n services, each depending on the next.
func chain(n int) []byte {
	var b strings.Builder
	b.WriteString("services:\n")
	for i := range n {
		fmt.Fprintf(&b, "  s%d:\n    image: s:dev\n    expose: [\"80\"]\n", i)
		if i+1 < n {
			fmt.Fprintf(&b, "    depends_on: [s%d]\n", i+1)
		}
	}
	return []byte(b.String())
}

// TestAliasBomb: a few hundred bytes of nested aliases are refused, at
// once, where they expand past the bound.
func TestAliasBomb(t *testing.T) {
	data := aliasBomb()
	start := time.Now()
	_, err := ImportBytes("c.yaml", data, nil)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("expands to more than %d YAML nodes", MaxNodes)) {
		t.Fatalf("%d-byte alias bomb: %v", len(data), err)
	}
	if took > time.Second {
		t.Errorf("the alias bomb took %s", took)
	}
	t.Logf("%d bytes refused in %s: %v", len(data), took, err)
}

// TestLongChain: a 10,000-service depends_on chain imports, and a
// scenario naming it validates (cycle search included), in bounded time;
// the import's own dependency checks are linear (compose-go's cycle
// search, which is not, is left out).
func TestLongChain(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 2,000 services")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), chain(importedLen), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := "version: 1\nname: c\ncompose: compose.yaml\nservices: {s0: {}}\nworkload:\n  engine: native\n  duration: 5s\n  streams: {a: {target: s0, path: /, arrival: {rate: 10}}}\n"
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := Import(context.Background(), []string{filepath.Join(dir, "compose.yaml")}, Options{Env: []string{}})
	imported := time.Since(start)
	if err != nil || len(got) != importedLen || got[0].Service.DependsOn[0] != "s1" {
		t.Fatalf("import: %d services, %v", len(got), err)
	}
	start = time.Now()
	if _, err := scenario.Load(filepath.Join(dir, "s.yaml"), scenario.Options{Compose: importFor}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d services: imported in %s; scenario loaded in %s", importedLen, imported, time.Since(start))
	if imported > 60*time.Second {
		t.Errorf("import took %s", imported)
	}
	// Our own checks on a 10,000-service chain (compose-go's parsing of
	// one takes a minute; the project is built here): linear, and a cycle
	// closing the chain is found in linear time too.
	proj := &types.Project{Services: types.Services{}}
	for i := range chainLen {
		c := types.ServiceConfig{Name: fmt.Sprintf("s%d", i)}
		if i+1 < chainLen {
			c = withDep(c, fmt.Sprintf("s%d", i+1))
		}
		proj.Services[c.Name] = c
	}
	ss := &sources{dir: dir, list: []*source{{file: "c.yaml"}}, main: 1}
	start = time.Now()
	errs := ss.checkDependencies(proj)
	if own := time.Since(start); len(errs) > 0 || own > time.Second {
		t.Errorf("dependency checks of %d services: %v in %s", chainLen, errs, own)
	}
	proj.Services["s9999"] = withDep(proj.Services["s9999"], "s0")
	start = time.Now()
	errs = ss.checkDependencies(proj)
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "dependency cycle detected: s0 -> s1 -> s2") || time.Since(start) > time.Second {
		t.Errorf("cycle: %v in %s", errs, time.Since(start))
	}
}

func withDep(c types.ServiceConfig, dep string) types.ServiceConfig {
	c.DependsOn = types.DependsOnConfig{dep: {Condition: types.ServiceConditionStarted, Required: true}}
	return c
}

// TestImportCancels: an import ends when its context does, whatever the
// input.
func TestImportCancels(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "compose.yaml")
	if err := os.WriteFile(p, chain(10_000), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Import(ctx, []string{p}, Options{})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Errorf("after %s: %v, want the context's end within 1s", time.Since(start), err)
	}
}
