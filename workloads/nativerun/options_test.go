package nativerun

import (
	"context"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/workdir"
)

func TestOptionsChecks(t *testing.T) {
	tests := []struct {
		name     string
		o        Options
		scenario bool
		wantErr  string
	}{
		{"a spec", Options{Spec: "s.json", Results: "r.jsonl"}, false, ""},
		{"a scenario with targets", Options{Targets: []string{"bank=http://127.0.0.1:1"}, Results: "r.jsonl"}, true, ""},
		{"both", Options{Spec: "s.json", Results: "r.jsonl"}, true, "give --spec FILE or a scenario, not both"},
		{"a spec with a target", Options{Spec: "s.json", Targets: []string{"bank=x"}, Results: "r.jsonl"}, false, "--target, --set and --seed go with a scenario"},
		{"neither", Options{Results: "r.jsonl"}, false, "no workload: give --spec FILE or a scenario file"},
		{"no results", Options{Spec: "s.json"}, false, "--results is required"},
		{"a bad shard", Options{Spec: "s.json", Shard: "2/2", Results: "r.jsonl"}, false, "--shard: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			if o.Shard == "" {
				o.Shard = DefaultShard
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
