package runner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
)

func TestEndChecks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte(`{"ok":true,"detail":"conserved","values":{"total":42}}`))
		case "/broken":
			w.Write([]byte(`{"ok":false,"detail":"3 cents missing"}`))
		case "/garbage":
			w.Write([]byte(`hello`))
		default:
			http.Error(w, "nope", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	topo := &testbed.Topology{Instances: []testbed.Instance{{Service: "bank", Address: strings.TrimPrefix(srv.URL, "http://")}}}
	sc := &scenario.Scenario{EndChecks: []scenario.EndCheck{
		{Name: "ok", Service: "bank", Path: "/ok"},
		{Name: "broken", Service: "bank", Path: "/broken"},
		{Name: "garbage", Service: "bank", Path: "/garbage"},
		{Name: "missing", Service: "bank", Path: "/missing"},
		{Name: "nosvc", Service: "vault", Path: "/ok"},
	}}
	got := runEndChecks(context.Background(), sc, topo)
	want := []struct {
		ok  bool
		err string
	}{{true, ""}, {false, ""}, {false, `want JSON {"ok": bool`}, {false, "404"}, {false, `no running instance of service "vault"`}}
	for i, w := range want {
		if got[i].OK != w.ok || (w.err == "" && got[i].Error != "") || !strings.Contains(got[i].Error, w.err) {
			t.Errorf("%s: %+v, want ok=%v error containing %q", got[i].Name, got[i], w.ok, w.err)
		}
	}
	if got[0].Values["total"] != 42 || got[1].Detail != "3 cents missing" {
		t.Errorf("values or detail lost: %+v", got[:2])
	}
}
