package compose

import (
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
)

// TestURLStarter: a running service's URL gives a starter that validates
// as written: the service external, GET on the URL's path and query, a
// host besides loopback allowed; URLs a run cannot load are refused with
// why.
func TestURLStarter(t *testing.T) {
	tests := []struct {
		url, want, wantErr string
	}{
		{"http://127.0.0.1:8080/api/items?limit=10", `path: "/api/items?limit=10"`, ""},
		{"http://localhost:3000", `external: "localhost:3000"`, ""},
		{"http://[::1]:9000/healthz", `external: "[::1]:9000"`, ""},
		{"http://staging.internal:8080/", `allow_targets: ["staging.internal"]`, ""},
		{"http://10.0.0.7/", `external: "10.0.0.7:80"`, ""},
		{"https://127.0.0.1:8443/", "", "give its http:// address"},
		{"http://user:secret@127.0.0.1:8080/", "", "no user:password"},
		{"127.0.0.1:8080", "", "want an http(s) URL"},
		{"http://127.0.0.1:8080/items?q={id}", "", "scenario paths read as templates"},
	}
	for _, tt := range tests {
		s, err := URLStarter(tt.url)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err %v, want %q", tt.url, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		if !strings.Contains(s.Scenario, tt.want) {
			t.Errorf("%s: starter lacks %s:\n%s", tt.url, tt.want, s.Scenario)
		}
		if _, err := scenario.Parse(s.Name+".yaml", []byte(s.Scenario), scenario.Options{}); err != nil {
			t.Errorf("%s: the starter does not validate: %v\n%s", tt.url, err, s.Scenario)
		}
	}
}
