package resilience

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeAPI records calls and answers like Toxiproxy; paths in fail answer 404.
func fakeAPI(t *testing.T, fail string) (*httptest.Server, *[]string) {
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		calls = append(calls, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(b)))
		if fail != "" && strings.HasPrefix(r.URL.Path, fail) {
			http.Error(w, "proxy not found", http.StatusNotFound)
			return
		}
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestToxiproxyCalls(t *testing.T) {
	srv, calls := fakeAPI(t, "")
	tp, err := NewToxiproxy(srv.URL+"/", "tok")
	if err != nil {
		t.Fatal(err)
	}
	var events []FaultEvent
	tp.OnChange = func(e FaultEvent) { events = append(events, e) }
	ctx := context.Background()
	tox := 0.5
	steps := []func() error{
		func() error {
			_, err := tp.CreateProxy(ctx, Proxy{Name: "api", Listen: "127.0.0.1:0", Upstream: "127.0.0.1:9", Enabled: true})
			return err
		},
		func() error {
			_, err := tp.AddToxic(ctx, "api", Toxic{Type: "latency", Attributes: map[string]any{"latency": 100}})
			return err
		},
		func() error {
			_, err := tp.UpdateToxic(ctx, "api", "latency_downstream", Toxic{Toxicity: &tox, Attributes: map[string]any{"latency": 200}})
			return err
		},
		func() error { return tp.RemoveToxic(ctx, "api", "latency_downstream") },
		func() error { return tp.SetEnabled(ctx, "api", false) },
		func() error { return tp.SetEnabled(ctx, "api", true) },
		func() error { return tp.DeleteProxy(ctx, "api") },
		func() error { return tp.Reset(ctx) },
	}
	for i, s := range steps {
		if err := s(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := []string{
		`POST /proxies Bearer tok {"name":"api","listen":"127.0.0.1:0","upstream":"127.0.0.1:9","enabled":true}`,
		`POST /proxies/api/toxics Bearer tok {"name":"latency_downstream","type":"latency","stream":"downstream","attributes":{"latency":100}}`,
		`POST /proxies/api/toxics/latency_downstream Bearer tok {"toxicity":0.5,"attributes":{"latency":200}}`,
		`DELETE /proxies/api/toxics/latency_downstream Bearer tok`,
		`POST /proxies/api Bearer tok {"enabled":false}`,
		`POST /proxies/api Bearer tok {"enabled":true}`,
		`DELETE /proxies/api Bearer tok`,
		`POST /reset Bearer tok`,
	}
	if strings.Join(*calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(*calls, "\n"), strings.Join(want, "\n"))
	}
	wantEv := []FaultEvent{{"api", "", ActionCreateProxy}, {"api", "latency_downstream", ActionAddToxic},
		{"api", "latency_downstream", ActionUpdateToxic}, {"api", "latency_downstream", ActionRemoveToxic},
		{"api", "", ActionDisable}, {"api", "", ActionEnable}, {"api", "", ActionDeleteProxy}, {"", "", ActionReset}}
	got, _ := json.Marshal(events)
	exp, _ := json.Marshal(wantEv)
	if string(got) != string(exp) {
		t.Errorf("events %s, want %s", got, exp)
	}
}

func TestToxiproxyErrors(t *testing.T) {
	srv, _ := fakeAPI(t, "/proxies/nope")
	tp, _ := NewToxiproxy(srv.URL, "")
	emitted := 0
	tp.OnChange = func(FaultEvent) { emitted++ }
	err := tp.RemoveToxic(context.Background(), "nope", "slow")
	if err == nil || !strings.Contains(err.Error(), `remove toxic "slow" from proxy "nope"`) || !strings.Contains(err.Error(), "404") {
		t.Errorf("error %v: want what, where and the status", err)
	}
	if _, err := tp.AddToxic(context.Background(), "api", Toxic{}); err == nil || !strings.Contains(err.Error(), "type is required") {
		t.Errorf("toxic without type: %v", err)
	}
	if emitted != 0 {
		t.Errorf("failed changes emitted %d events", emitted)
	}
	for _, u := range []string{"", "127.0.0.1:8474", "ftp://h:1", "http://"} {
		if _, err := NewToxiproxy(u, ""); err == nil {
			t.Errorf("NewToxiproxy(%q) accepted", u)
		}
	}
}

// TestToxiproxyFollowsNoRedirect: an API that answers with a redirect gets
// an error naming it; the address it points at gets no request.
func TestToxiproxyFollowsNoRedirect(t *testing.T) {
	elsewhere, calls := fakeAPI(t, "")
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+r.URL.Path, code)
		}))
		t.Cleanup(redirect.Close)
		tp, err := NewToxiproxy(redirect.URL, "tok")
		if err != nil {
			t.Fatal(err)
		}
		_, err = tp.CreateProxy(context.Background(), Proxy{Name: "p", Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1"})
		if err == nil || !strings.Contains(err.Error(), "follows none") || !strings.Contains(err.Error(), elsewhere.URL) {
			t.Errorf("%d: error %v, want one naming the redirect", code, err)
		}
	}
	if len(*calls) > 0 {
		t.Errorf("the redirect was followed: %q", *calls)
	}
}
