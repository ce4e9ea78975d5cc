package judge

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/chaosrun/chaosrun/internal/workdir"
)

func TestOptionsChecks(t *testing.T) {
	tests := []struct {
		name, args string
		files      []string
		wantErr    string
	}{
		{"files", "", []string{"r.jsonl"}, ""},
		{"no file", "", nil, "no results file: give RESULTS.jsonl… or --listen HOST:PORT"},
		{"shards with files", "--shards 2", []string{"r.jsonl"}, "--shards, --events-listen and --tls-* go with --listen"},
		{"receive", "--listen 127.0.0.1:0 --shards 4", nil, ""},
		{"faults with listen", "--listen 127.0.0.1:0 --faults run.json", nil, "--faults and --partial go with results files"},
		{"too many shards", "--listen 127.0.0.1:0 --shards 1001", nil, "--shards 1001: want 1 to 1000"},
		{"cert without key", "--listen 127.0.0.1:0 --tls-cert c.pem", nil, "--tls-cert and --tls-key go together"},
		{"not HOST:PORT", "--listen 127.0.0.1", nil, `--listen "127.0.0.1" is not HOST:PORT`},
	}
	wd := workdir.FS{FS: os.DirFS("/"), Dir: t.TempDir()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o Options
			fl := pflag.NewFlagSet("judge", pflag.ContinueOnError)
			o.Register(fl, "")
			if err := fl.Parse(strings.Fields(tt.args)); err != nil {
				t.Fatal(err)
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
