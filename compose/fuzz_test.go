package compose

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
)

// fuzzBound is the longest one input may take: a file that takes longer
// (an alias bomb, a quadratic walk) fails the fuzzer.
const fuzzBound = 5 * time.Second

// FuzzImport feeds arbitrary Compose files to the import: it never panics
// nor takes longer than fuzzBound, and every problem it reports in the
// file has a position and a key.
func FuzzImport(f *testing.F) {
	for _, file := range []string{"testdata/shop.yaml", "testdata/unsupported.yaml", "testdata/bad-values.yaml", "testdata/no-image.yaml", "testdata/wild/django/compose.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("services: {a: {image: x, depends_on: [a]}}"))
	f.Add([]byte("x: &a [*a]"))
	f.Add([]byte("services:\n  a: &s\n    image: x\n    <<: *s\n"))
	f.Add(aliasBomb())
	f.Add(chain(50))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), fuzzBound)
		defer cancel()
		start := time.Now()
		got, err := importSources(ctx, []*source{{file: dir + "/compose.yaml", data: data}}, Options{Env: []string{}})
		if ctx.Err() != nil {
			t.Fatalf("one input took %s, more than %s:\n%q", time.Since(start), fuzzBound, data)
		}
		if err == nil {
			for _, n := range got {
				if n.Service == nil || n.Service.Imported == nil {
					t.Fatalf("service %q imported without its origin", n.Name)
				}
			}
			return
		}
		var errs scenario.Errors
		if !errors.As(err, &errs) {
			t.Fatalf("error %T is not scenario.Errors: %v", err, err)
		}
		for _, e := range errs {
			if e.Line <= 0 || e.Col <= 0 || e.Field == "" {
				t.Fatalf("error without a position or a key: %#v", e)
			}
		}
	})
}
