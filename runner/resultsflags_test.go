package runner

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/internal/workdir"
)

func TestResultsFlags(t *testing.T) {
	cert, key := testenv.WriteCert(t, []string{"harness.example"}, nil)
	ipCert, ipKey := testenv.WriteCert(t, nil, []net.IP{net.IPv4(10, 0, 0, 5)})
	noName, noNameKey := testenv.WriteCert(t, nil, nil)
	tests := []struct {
		name                string
		flags               ResultsFlags
		wantErr             string
		wantToken           string // "generated" for a fresh one
		wantTLS, wantPrint  bool
		wantServer, wantCAt string
	}{
		{"loopback: no token here, the run makes one", ResultsFlags{}, "", "", false, false, "", ""},
		{"loopback with a port", ResultsFlags{Listen: "127.0.0.1:7000"}, "", "", false, false, "", ""},
		{"any address gets a generated token", ResultsFlags{Listen: "0.0.0.0:7000"}, "", "generated", false, true, "", ""},
		{"a given token is kept", ResultsFlags{Listen: "0.0.0.0:7000", Token: "mine"}, "", "mine", false, false, "", ""},
		{"TLS: the local k6 trusts the certificate by its DNS name", ResultsFlags{Listen: "0.0.0.0:7000", Cert: cert, Key: key}, "", "generated", true, true, "harness.example", cert},
		{"TLS: by its IP", ResultsFlags{Listen: "0.0.0.0:7000", Cert: ipCert, Key: ipKey}, "", "generated", true, true, "10.0.0.5", ipCert},
		{"not HOST:PORT", ResultsFlags{Listen: "0.0.0.0"}, "is not HOST:PORT", "", false, false, "", ""},
		{"cert without key", ResultsFlags{Cert: cert}, "go together", "", false, false, "", ""},
		{"key does not match", ResultsFlags{Cert: cert, Key: ipKey}, "results stream TLS", "", false, false, "", ""},
		{"certificate names no host", ResultsFlags{Cert: noName, Key: noNameKey}, "names no host", "", false, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errb bytes.Buffer
			res, err := tt.flags.Settings(context.Background(), workdir.FS{FS: os.DirFS("/"), Dir: t.TempDir()}, &errb)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantToken == "generated" && len(res.Token) != 32:
				t.Errorf("token %q, want a generated one", res.Token)
			case tt.wantToken != "generated" && res.Token != tt.wantToken:
				t.Errorf("token %q, want %q", res.Token, tt.wantToken)
			}
			if printed := strings.Contains(errb.String(), "token "+res.Token); printed != tt.wantPrint || (tt.wantPrint && res.Token == "") {
				t.Errorf("stderr %q: token printed %v, want %v", errb.String(), printed, tt.wantPrint)
			}
			if (res.TLS != nil) != tt.wantTLS || res.K6Options.Get("server_name") != tt.wantServer || res.K6Options.Get("ca") != tt.wantCAt {
				t.Errorf("TLS %v, k6 options %v", res.TLS != nil, res.K6Options)
			}
		})
	}
}
