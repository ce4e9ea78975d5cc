package nativerun

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/internal/workdir"
)

func TestOptionsChecks(t *testing.T) {
	tests := []struct {
		name, args string
		scenario   bool
		wantErr    string
	}{
		{"a spec", "--spec s.json --results r.jsonl", false, ""},
		{"a scenario with targets", "--target bank=http://127.0.0.1:1 --results r.jsonl", true, ""},
		{"both", "--spec s.json --results r.jsonl", true, "give --spec FILE or a scenario, not both"},
		{"a spec with a target", "--spec s.json --target bank=x --results r.jsonl", false, "--target, --set and --seed go with a scenario"},
		{"neither", "--results r.jsonl", false, "no workload: give --spec FILE or a scenario file"},
		{"no results", "--spec s.json", false, "--results is required"},
		{"a bad shard", "--spec s.json --shard 2/2 --results r.jsonl", false, "--shard: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o Options
			fl := pflag.NewFlagSet("load", pflag.ContinueOnError)
			o.Register(fl)
			if err := fl.Parse(strings.Fields(tt.args)); err != nil {
				t.Fatal(err)
			}
			_, err := o.ParseShard()
			if err == nil {
				err = o.CheckWorkload(tt.scenario)
			}
			if err == nil {
				_, err = o.ResultsTo(context.Background(), workdir.FS{Dir: t.TempDir()}, "")
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want %q…", err, tt.wantErr)
			}
		})
	}
}
