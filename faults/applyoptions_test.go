package faults

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/exitcode"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
)

// TestTarget: fault apply acts through an http(s) Toxiproxy, with its
// token, on edge faults only; a scenario without faults has nothing to
// apply, which is said.
func TestTarget(t *testing.T) {
	edge := scenario.Fault{Name: "slow", Kind: "latency", Edge: "a->b"}
	host := scenario.Fault{Name: "paused", Kind: "host_pause", Host: "b"}
	tests := []struct {
		name   string
		o      ApplyOptions
		faults []scenario.Fault
		url    string
		said   string
		err    string
	}{
		{"an edge fault", ApplyOptions{API: "http://127.0.0.1:8474"}, []scenario.Fault{edge}, "http://127.0.0.1:8474", "", ""},
		{"with a token", ApplyOptions{API: "https://tp.example", Token: "t0k"}, []scenario.Fault{edge}, "https://:t0k@tp.example", "", ""},
		{"no faults", ApplyOptions{API: "http://127.0.0.1:8474"}, nil, "", "s has no faults: nothing to apply", ""},
		{"a host fault", ApplyOptions{API: "http://127.0.0.1:8474"}, []scenario.Fault{edge, host}, "", "", "fault paused is a host_pause: host faults act on containers"},
		{"not http", ApplyOptions{API: "ftp://tp"}, []scenario.Fault{edge}, "", "", `--toxiproxy "ftp://tp" is not an http(s) URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			u, err := tt.o.Target(&scenario.Scenario{Name: "s", Faults: tt.faults}, &stdout)
			if tt.err != "" {
				if ee, ok := exitcode.As(err); !ok || ee.Code != exitcode.Usage || !strings.HasPrefix(ee.Err.Error(), tt.err) {
					t.Fatalf("err %v, want exit 2: %q…", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if u != nil {
				got = u.String()
			}
			if got != tt.url {
				t.Errorf("url %q, want %q", got, tt.url)
			}
			if !strings.Contains(stdout.String(), tt.said) {
				t.Errorf("stdout %q, want %q", stdout.String(), tt.said)
			}
		})
	}
}

// events is an event report whose Done fails as told.
type events struct{ done error }

func (e *events) Emit(context.Context, record.FaultEvent) {}
func (e *events) Done(context.Context, int) error         { return e.done }

// TestApplyRunEnds: how fault apply ends: a Toxiproxy whose proxies never
// come is a harness error (3), and so are events that did not get where
// they go; a stop is 130.
func TestApplyRunEnds(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	sc := &scenario.Scenario{Name: "s", Services: map[string]*scenario.Service{"a": {}, "b": {}},
		Faults: []scenario.Fault{{Name: "slow", Kind: "latency", Edge: "a->b"}}}
	live := context.Background()
	stopped, cancel := context.WithCancel(live)
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		done error
		code int
		msg  string
	}{
		{"proxies never ready", live, nil, exitcode.RunError, "not ready within"},
		{"events lost", live, errors.New("judge gone"), exitcode.RunError, "some events did not reach the judge or the events file"},
		{"stopped", stopped, nil, exitcode.Interrupted, "stopped; the faults in force were reverted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ApplyOptions{API: srv.URL, Wait: 200 * time.Millisecond}
			u, err := o.Target(sc, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			zero := func(context.Context) (time.Time, error) { return time.Now(), nil }
			err = o.Run(tt.ctx, u, sc, zero, &events{done: tt.done}, &bytes.Buffer{})
			if ee, ok := exitcode.As(err); !ok || ee.Code != tt.code || !strings.Contains(ee.Err.Error(), tt.msg) {
				t.Fatalf("got %v, want exit %d saying %q", err, tt.code, tt.msg)
			}
		})
	}
}
