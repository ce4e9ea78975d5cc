package extension_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// toxiproxyAPI starts a real Toxiproxy API on 127.0.0.1 that wants token as a Bearer.
func toxiproxyAPI(t *testing.T, token string) string {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	routes := srv.Routes()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "token required", http.StatusUnauthorized)
			return
		}
		routes.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		api.Close()
		srv.Collection.Clear()
	})
	return api.URL
}

// TestFaultControlFromScript drives a real Toxiproxy from a k6 script and
// checks that every change reaches the results stream as a
// resilience_fault_events series tagged proxy, toxic and action.
func TestFaultControlFromScript(t *testing.T) {
	k6Binary(t)
	target := server(t)
	api := toxiproxyAPI(t, "s3cret")
	out := filepath.Join(t.TempDir(), "stream.jsonl")
	env := map[string]string{"TOXIPROXY": api, "TOXIPROXY_TOKEN": "s3cret", "UPSTREAM": strings.TrimPrefix(target.URL, "http://")}
	code, log := runK6(t, env, "--out", "resilience="+out, script("faults.js"))
	if code != 0 {
		t.Fatalf("k6 exit %d:\n%s", code, log)
	}
	got := seriesIn(t, out, "resilience_fault_events")
	want := map[string]float64{
		"api//create_proxy": 1, "api/slow/add_toxic": 1, "api/slow/update_toxic": 1, "api/slow/remove_toxic": 1,
		"api//disable": 1, "api//enable": 1, "api//delete_proxy": 1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("fault events %s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("fault event series %v, want exactly %v", got, want)
	}

	// k6's blacklistIPs covers the Toxiproxy API as it covers http requests.
	code, log = runK6(t, env, "--blacklist-ip", "127.0.0.0/8", script("faults.js"))
	if code == 0 || !strings.Contains(log, "blacklistIPs") {
		t.Errorf("blacklisted API: k6 exit %d, want a failure naming blacklistIPs:\n%s", code, log)
	}

	// Without the token every change is refused, and the script fails.
	env["TOXIPROXY_TOKEN"] = "wrong"
	code, log = runK6(t, env, script("faults.js"))
	if code == 0 || !strings.Contains(log, "401") {
		t.Errorf("wrong token: k6 exit %d, want a failure naming 401:\n%s", code, log)
	}
}
