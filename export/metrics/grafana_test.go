package metrics

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeGrafana answers the annotation endpoints of Grafana's HTTP API as
// Grafana documents them, checking each request.
type fakeGrafana struct {
	t     *testing.T
	mu    sync.Mutex
	token string
	held  []Annotation
	posts int
}

func (g *fakeGrafana) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+g.token {
		http.Error(w, `{"message":"Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/grafana/api/annotations":
		tags := r.URL.Query()["tags"]
		out := []Annotation{}
		for _, a := range g.held {
			if len(tags) == 0 || slices.Contains(a.Tags, tags[0]) {
				out = append(out, a)
			}
		}
		json.NewEncoder(w).Encode(out)
	case r.Method == http.MethodPost && r.URL.Path == "/grafana/api/annotations":
		var a Annotation
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&a) != nil || a.Time == 0 || a.Text == "" {
			http.Error(w, `{"message":"bad annotation"}`, http.StatusBadRequest)
			return
		}
		g.posts++
		a.ID = int64(len(g.held) + 1)
		g.held = append(g.held, a)
		json.NewEncoder(w).Encode(map[string]any{"id": a.ID, "message": "Annotation added"})
	default:
		g.t.Errorf("unexpected %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	}
}

func TestGrafanaAnnotations(t *testing.T) {
	g := &fakeGrafana{t: t, token: "sa-token"}
	srv := httptest.NewServer(g)
	defer srv.Close()
	r := synthRun(t)
	cfg := Config{GrafanaURL: srv.URL + "/grafana/", GrafanaToken: "sa-token"}
	res, err := Export(context.Background(), r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Annotations != 2 || len(g.held) != 2 {
		t.Fatalf("%d annotations sent, Grafana holds %d; want the fault and the run", res.Annotations, len(g.held))
	}
	fault := g.held[0]
	if fault.Time != t0.Add(1500*time.Millisecond).UnixMilli() || fault.TimeEnd != t0.Add(2500*time.Millisecond).UnixMilli() {
		t.Errorf("fault window %d..%d, want applied..reverted", fault.Time, fault.TimeEnd)
	}
	for _, tag := range []string{"chaosrun", "fault", "fault:slow", "scenario:synth", "run:synth@2026-11-22T07:00:00.000Z"} {
		if !slices.Contains(fault.Tags, tag) {
			t.Errorf("fault annotation tags %v lack %s", fault.Tags, tag)
		}
	}
	if !strings.Contains(fault.Text, "slow (latency on a->b)") {
		t.Errorf("fault text %q", fault.Text)
	}
	if run := g.held[1]; run.Time != t0.UnixMilli() || !strings.Contains(run.Text, "breached: p99") {
		t.Errorf("run annotation %+v", run)
	}
	// Exporting the same run again adds nothing.
	res, err = Export(context.Background(), r, cfg)
	if err != nil || res.Annotations != 0 || g.posts != 2 {
		t.Fatalf("second export: %v, %d new, %d posts in all; want none new", err, res.Annotations, g.posts)
	}
}

func TestGrafanaRefusesBadToken(t *testing.T) {
	g := &fakeGrafana{t: t, token: "right"}
	srv := httptest.NewServer(g)
	defer srv.Close()
	_, err := Export(context.Background(), synthRun(t), Config{GrafanaURL: srv.URL + "/grafana", GrafanaToken: "wrong"})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("err = %v, want Grafana's 401", err)
	}
}
