package gameday

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
)

// TestClientCommands: fault list, clear and add, from their flags to
// their exit codes: what the game day refuses (4xx) and bad flags exit 2,
// a game day gone 3, or 130 once interrupted.
func TestClientCommands(t *testing.T) {
	srv := httptest.NewServer(&fakeAPI{})
	defer srv.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	live := context.Background()
	ended, cancel := context.WithCancel(live)
	cancel()
	list := func(ctx context.Context, c *Client, w *bytes.Buffer) error { return ListFaults(ctx, c, w) }
	clearOne := func(name string) func(context.Context, *Client, *bytes.Buffer) error {
		return func(ctx context.Context, c *Client, w *bytes.Buffer) error {
			return ClearFault(ctx, c, name, "alice", w)
		}
	}
	add := func(f AddFlags) func(context.Context, *Client, *bytes.Buffer) error {
		return func(ctx context.Context, c *Client, w *bytes.Buffer) error { return f.Inject(ctx, c, w) }
	}
	latency := AddFlags{FaultRequest: FaultRequest{Kind: "latency", Edge: "bank->vault"}, Attrs: []string{"latency=2000"}}
	tests := []struct {
		name   string
		ctx    context.Context
		url    string
		call   func(context.Context, *Client, *bytes.Buffer) error
		code   int
		stdout string
	}{
		{"list", live, srv.URL, list, exitcode.OK, "slow\tlatency 2000ms on bank->vault\tby "},
		{"clear", live, srv.URL, clearOne("slow"), exitcode.OK, "cleared slow"},
		{"add", live, srv.URL, add(latency), exitcode.OK, "injected : as asked"},
		{"an unknown fault is refused", live, srv.URL, clearOne("nope"), exitcode.Usage, ""},
		{"an unknown kind is refused", live, srv.URL, add(AddFlags{FaultRequest: FaultRequest{Kind: "bogus", Host: "bank"}}), exitcode.Usage, ""},
		{"add needs a target", live, srv.URL, add(AddFlags{FaultRequest: FaultRequest{Kind: "latency"}}), exitcode.Usage, ""},
		{"no URL", live, "", list, exitcode.Usage, ""},
		{"a game day gone", live, gone.URL, list, exitcode.RunError, ""},
		{"interrupted", ended, gone.URL, list, exitcode.Interrupted, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			f := ClientFlags{URL: tt.url}
			err := f.Call(tt.ctx, func(ctx context.Context, c *Client) error { return tt.call(ctx, c, &stdout) })
			code := exitcode.OK
			if ee, ok := exitcode.As(err); ok {
				code = ee.Code
			} else if err != nil {
				t.Fatalf("an error without an exit code: %v", err)
			}
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) {
				t.Fatalf("exit %d (%v), stdout %q; want %d, %q", code, err, stdout.String(), tt.code, tt.stdout)
			}
		})
	}
}
