package gameday

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeAPI answers as a game day's API does, with one fault in force, and
// records the last request's token and clearer.
type fakeAPI struct{ token, by string }

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.token, f.by = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.URL.Query().Get("by")
	in := ActiveFault{FaultRequest: FaultRequest{Name: "slow"}, Describe: "latency 2000ms on bank->vault", Since: time.Unix(0, 0)}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/faults":
		writeJSON(w, http.StatusOK, []ActiveFault{in})
	case r.Method == http.MethodPost && r.URL.Path == "/api/faults":
		var req FaultRequest
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Kind == "bogus" {
			writeJSON(w, http.StatusBadRequest, errBody("unknown kind"))
			return
		}
		writeJSON(w, http.StatusCreated, ActiveFault{FaultRequest: req, Describe: "as asked"})
	case r.Method == http.MethodDelete && r.URL.Path == "/api/faults/slow":
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodDelete:
		writeJSON(w, http.StatusNotFound, errBody("no fault "+strings.TrimPrefix(r.URL.Path, "/api/faults/")))
	default:
		http.Error(w, "teapot", http.StatusTeapot)
	}
}

func TestClient(t *testing.T) {
	api := &fakeAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	ctx := context.Background()
	c, err := NewClient(srv.URL+"/?token=fromurl", "")
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "slow" || api.token != "fromurl" {
		t.Fatalf("List = %+v, %v (token %q)", list, err, api.token)
	}
	af, err := c.Add(ctx, FaultRequest{Kind: "latency", Edge: "bank->vault"})
	if err != nil || af.Kind != "latency" || af.Describe != "as asked" {
		t.Fatalf("Add = %+v, %v", af, err)
	}
	if err := c.Clear(ctx, "slow", "alice (terminal)"); err != nil || api.by != "alice (terminal)" {
		t.Fatalf("Clear = %v (by %q)", err, api.by)
	}
	var ae *APIError
	_, err = c.Add(ctx, FaultRequest{Kind: "bogus"})
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || ae.Message != "unknown kind" {
		t.Errorf("Add of a bad fault: %v, want a 400 APIError with the answer's error", err)
	}
	err = c.Clear(ctx, "nope", "")
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound || !strings.Contains(err.Error(), "no fault nope") {
		t.Errorf("Clear of an unknown fault: %v", err)
	}
	given, _ := NewClient(srv.URL+"?token=fromurl", "given")
	if _, err := given.List(ctx); err != nil || api.token != "given" {
		t.Errorf("a given token should beat the URL's: sent %q (%v)", api.token, err)
	}
	srv.Close()
	if _, err := c.List(ctx); err == nil || !strings.Contains(err.Error(), "the game day at "+srv.URL) {
		t.Errorf("List of a game day gone: %v", err)
	}
}

func TestNewClientRefusesOtherURLs(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "http://", "127.0.0.1:8080", "://x"} {
		if _, err := NewClient(u, ""); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
			t.Errorf("NewClient(%q): %v", u, err)
		}
	}
}

// TestParseAttrsAndRefused: attributes are NAME=NUMBER, each bad one named;
// only a 4xx answer is a refusal.
func TestParseAttrsAndRefused(t *testing.T) {
	got, err := ParseAttrs([]string{"latency=2000", " jitter = 5.5"})
	if err != nil || got["latency"] != 2000 || got["jitter"] != 5.5 || len(got) != 2 {
		t.Errorf("ParseAttrs = %v, %v", got, err)
	}
	for _, bad := range []string{"latency", "=1", "latency=fast"} {
		if _, err := ParseAttrs([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseAttrs(%q): err %v, want one naming it", bad, err)
		}
	}
	if !Refused(fmt.Errorf("add: %w", &APIError{StatusCode: 409})) || Refused(&APIError{StatusCode: 503}) || Refused(errors.New("dial")) {
		t.Error("Refused does not tell 4xx from the rest")
	}
	if Terminal() == "" {
		t.Error("Terminal is empty")
	}
}
