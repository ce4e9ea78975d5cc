package report

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestDiffFlagsOptions(t *testing.T) {
	tests := []struct {
		name, args, wantErr string
	}{
		{"defaults", "", ""},
		{"assertions only drops the key figures", "--assertions-only", ""},
		{"too few iterations", "--iterations 99", "--iterations 99: allowed 100 to 100000"},
		{"confidence too low", "--confidence 0.4", "--confidence 0.4: allowed 0.5 to 0.9999"},
		{"block too long", "--block 61", "--block 61: allowed 1 to 60 seconds"},
		{"a negative minimum", "--min-rate -0.1", "--min-* flags must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f DiffFlags
			fl := pflag.NewFlagSet("diff", pflag.ContinueOnError)
			f.Register(fl)
			if err := fl.Parse(strings.Fields(tt.args)); err != nil {
				t.Fatal(err)
			}
			o, err := f.Options()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Iterations != 2000 || o.Confidence != 0.99 || o.NoKeyFigures != f.AssertionsOnly {
				t.Errorf("options %+v from %q", o, tt.args)
			}
		})
	}
}
