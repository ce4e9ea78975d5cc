package judge

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/workdir"
)

func TestOptionsChecks(t *testing.T) {
	tests := []struct {
		name    string
		set     func(*Options)
		files   []string
		wantErr string
	}{
		{"files", nil, []string{"r.jsonl"}, ""},
		{"no file", nil, nil, "no results file: give RESULTS.jsonl… or --listen HOST:PORT"},
		{"shards with files", func(o *Options) { o.Shards = 2 }, []string{"r.jsonl"}, "--shards, --events-listen and --tls-* go with --listen"},
		{"receive", func(o *Options) { o.Listen, o.Shards = "127.0.0.1:0", 4 }, nil, ""},
		{"faults with listen", func(o *Options) { o.Listen, o.Faults = "127.0.0.1:0", "run.json" }, nil, "--faults and --partial go with results files"},
		{"too many shards", func(o *Options) { o.Listen, o.Shards = "127.0.0.1:0", 1001 }, nil, "--shards 1001: want 1 to 1000"},
		{"cert without key", func(o *Options) { o.Listen, o.Cert = "127.0.0.1:0", "c.pem" }, nil, "--tls-cert and --tls-key go together"},
		{"not HOST:PORT", func(o *Options) { o.Listen = "127.0.0.1" }, nil, `--listen "127.0.0.1" is not HOST:PORT`},
	}
	wd := workdir.FS{FS: os.DirFS("/"), Dir: t.TempDir()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			if tt.set != nil {
				tt.set(&o)
			}
			var stderr bytes.Buffer
			var err error
			if o.Listen != "" {
				var ro ReceiveOptions
				ro, err = o.ReceiveOptions(context.Background(), wd, &stderr)
				if err == nil && (len(ro.Token) != 32 || !strings.Contains(stderr.String(), "judge: token "+ro.Token)) {
					t.Errorf("token %q, stderr %q: want one made and said", ro.Token, stderr.String())
				}
			} else {
				_, err = o.FileOptions(context.Background(), wd, tt.files, nil)
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
