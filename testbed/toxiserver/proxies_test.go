package toxiserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestProxiesAtStart(t *testing.T) {
	tests := []struct {
		name  string
		stage bool
	}{
		{"plain", false},
		{"behind an HTTP stage", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--listen", "127.0.0.1:0", "--proxy", "bank->vault=127.0.0.1:0=127.0.0.1:9", "--proxy", "bank->ledger.1=127.0.0.1:0=127.0.0.1:9"}
			if tt.stage {
				args = append(args, "--http-stage")
			}
			base := start(t, args...)
			resp, err := http.Get(base + "/proxies")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got map[string]struct {
				Upstream string `json:"upstream"`
				Enabled  bool   `json:"enabled"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || !got["bank->vault"].Enabled || !got["bank->ledger.1"].Enabled {
				t.Fatalf("proxies %+v, want both, enabled", got)
			}
			if tt.stage {
				r, err := http.Get(base + "/proxies/bank-%3Evault/http")
				if err != nil {
					t.Fatal(err)
				}
				r.Body.Close()
				if r.StatusCode != http.StatusOK {
					t.Fatalf("stage of a proxy made at start: %s", r.Status)
				}
			}
		})
	}
}

func TestProxyFlagErrors(t *testing.T) {
	tests := []struct{ flag, want string }{
		{"bank->vault=127.0.0.1:0", "NAME=LISTEN=UPSTREAM"},
		{"=127.0.0.1:0=127.0.0.1:9", "NAME=LISTEN=UPSTREAM"},
		{"bank->vault=nowhere=127.0.0.1:9", `"nowhere" is not HOST:PORT`},
		{"a=127.0.0.1:0=127.0.0.1:9 --proxy a=127.0.0.1:0=127.0.0.1:9", "already exists"},
	}
	for _, tt := range tests {
		args := append([]string{"--listen", "127.0.0.1:0"}, strings.Fields("--proxy "+tt.flag)...)
		err := Main(context.Background(), args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("--proxy %s: err = %v, want %q", tt.flag, err, tt.want)
		}
	}
}
