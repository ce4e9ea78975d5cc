package gameday

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/scenario"
)

// FuzzAPI sends any request to the game day's API: it never panics, answers
// with a known status, and what is in force is exactly what it lists, under
// names a scenario would accept (or the default KIND@TARGET).
func FuzzAPI(f *testing.F) {
	seeds := []struct{ method, path, body string }{
		{"POST", "/api/faults", `{"kind":"latency","edge":"bank->vault","attributes":{"latency":100}}`},
		{"POST", "/api/faults", `{"name":"..","kind":"latency","edge":"bank->vault","attributes":{"latency":100}}`},
		{"POST", "/api/faults", `{"name":"slow","kind":"timeout","edge":"bank->vault","toxicity":0.5,"attributes":{"timeout":10}}`},
		{"DELETE", "/api/faults/slow?by=x", ""},
		{"DELETE", "/api/faults/latency@bank-%3Evault", ""},
		{"GET", "/api/faults", ""},
		{"GET", "/api/state", ""},
		{"POST", "/api/stop", `{"by":"me"}`},
		{"POST", "/api/faults", `{"kind":"host_stop","host":"bank"}`},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, path string, body []byte) {
		sc := testScenario()
		api := &fakeToxics{toxics: map[string]bool{}}
		g := &gameDay{ctx: context.Background(), ctl: newControl(sc, &faults.ScenarioEnv{Scenario: sc, API: api}), hub: newHub(),
			stopCh: make(chan struct{}), kickCh: make(chan struct{}, 1)}
		g.hub.close() // an event stream ends at once instead of streaming
		h := g.handler()
		for _, m := range []string{method, "POST", "DELETE"} {
			req, err := http.NewRequest(m, "http://127.0.0.1"+path, bytes.NewReader(body))
			if err != nil {
				return
			}
			req.Host = "127.0.0.1"
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if !knownStatus[rec.Code] {
				t.Fatalf("%s %s %q: status %d", m, path, body, rec.Code)
			}
		}
		listed := g.ctl.List()
		if api.count() != len(listed) { // no host control here: only toxics take effect
			t.Fatalf("%d toxics in force, %d faults listed", api.count(), len(listed))
		}
		for _, af := range listed {
			if scenario.CheckFaultName(af.Name) != nil && af.Name != af.Kind+"@"+af.Edge+af.Host {
				t.Fatalf("a fault in force is named %q", af.Name)
			}
			if strings.ContainsAny(af.By, "\x00\n\r\x1b") || len([]rune(af.By)) > 64 {
				t.Fatalf("a fault in force is by %q", af.By)
			}
		}
	})
}

var knownStatus = map[int]bool{200: true, 201: true, 202: true, 204: true, 301: true, 307: true, 308: true, 400: true, 403: true, 404: true,
	405: true, 409: true, 413: true, 415: true, 502: true}
