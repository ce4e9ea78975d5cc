package compose

import (
	"errors"
	"os"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
)

// FuzzImport feeds arbitrary Compose files to the import: it never panics,
// and every problem it reports in the file has a position and a key.
func FuzzImport(f *testing.F) {
	for _, file := range []string{"testdata/shop.yaml", "testdata/unsupported.yaml", "testdata/bad-values.yaml", "testdata/no-image.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("services: {a: {image: x, depends_on: [a]}}"))
	f.Add([]byte("x: &a [*a]"))
	f.Add([]byte("services:\n  a: &s\n    image: x\n    <<: *s\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ImportBytes(dir+"/compose.yaml", data, nil)
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
