package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/gameday"
)

// fakeGameDay answers like a game day's API: one fault in force, kinds
// other than latency refused, a 502 for kind "broken".
func fakeGameDay(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /api/faults", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, []gameday.ActiveFault{{FaultRequest: gameday.FaultRequest{Name: "slow", By: "alice"}, Describe: "latency 2000ms"}})
	})
	mux.HandleFunc("POST /api/faults", func(w http.ResponseWriter, r *http.Request) {
		var req gameday.FaultRequest
		json.NewDecoder(r.Body).Decode(&req)
		switch req.Kind {
		case "latency":
			reply(w, http.StatusCreated, gameday.ActiveFault{FaultRequest: req, Describe: "latency on " + req.Edge})
		case "broken":
			reply(w, http.StatusBadGateway, map[string]string{"error": "toxiproxy: connection refused"})
		default:
			reply(w, http.StatusBadRequest, map[string]string{"error": "unknown kind " + req.Kind})
		}
	})
	mux.HandleFunc("DELETE /api/faults/{name}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") != "slow" {
			reply(w, http.StatusNotFound, map[string]string{"error": "no fault " + r.PathValue("name")})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestFaultCommandLines(t *testing.T) {
	url := fakeGameDay(t).URL
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	cases := []struct {
		name       string
		env        map[string]string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"list", nil, []string{"list", "--gameday", url}, exitOK, "slow\tlatency 2000ms\tby alice", ""},
		{"list, URL from the environment", map[string]string{"CHAOSRUN_GAMEDAY": url}, []string{"list"}, exitOK, "slow", ""},
		{"add", nil, []string{"add", "--kind", "latency", "--edge", "bank->vault", "--attr", "latency=2000", "--gameday", url}, exitOK, "injected : latency on bank->vault", ""},
		{"clear", nil, []string{"clear", "slow", "--gameday", url}, exitOK, "cleared slow", ""},
		{"refused kind is a usage error", nil, []string{"add", "--gameday", url, "--kind", "nope", "--host", "bank"}, exitUsage, "", "400 Bad Request: unknown kind nope"},
		{"unknown fault is a usage error", nil, []string{"clear", "--gameday", url, "fast"}, exitUsage, "", "404 Not Found: no fault fast"},
		{"the game day failing is a harness error", nil, []string{"add", "--gameday", url, "--kind", "broken", "--edge", "a->b"}, exitRunError, "", "502 Bad Gateway"},
		{"a game day gone is a harness error", nil, []string{"list", "--gameday", gone.URL}, exitRunError, "", "the game day at " + gone.URL},
		{"no URL", nil, []string{"list"}, exitUsage, "", "--gameday URL is required"},
		{"not a URL", nil, []string{"list", "--gameday", "ftp://x"}, exitUsage, "", `--gameday "ftp://x" is not an http(s) URL`},
		{"add needs a target", nil, []string{"add", "--gameday", url, "--kind", "latency"}, exitUsage, "", "exactly one of --edge or --host"},
		{"bad attribute", nil, []string{"add", "--gameday", url, "--kind", "latency", "--edge", "a->b", "--attr", "latency"}, exitUsage, "", "want NAME=NUMBER"},
		{"clear needs a name", nil, []string{"clear", "--gameday", url}, exitUsage, "", "accepts 1 arg(s), received 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, so, se := testState(t)
			st.Env = tc.env
			code := Execute(context.Background(), st, append([]string{"fault"}, tc.args...))
			if code != tc.wantCode || !strings.Contains(so.String(), tc.wantStdout) || !strings.Contains(se.String(), tc.wantStderr) {
				t.Errorf("exit %d, want %d\nstdout (want %q): %s\nstderr (want %q): %s", code, tc.wantCode, tc.wantStdout, so, tc.wantStderr, se)
			}
		})
	}
}
