package exitcode

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestErrors(t *testing.T) {
	cause := errors.New("bad flag")
	for _, tc := range []struct {
		name    string
		err     error
		wantNil bool
		code    int
		msg     string
	}{
		{name: "ok is no error", err: Exit(OK), wantNil: true},
		{name: "exit without a message", err: Exit(Breach), code: Breach},
		{name: "fail keeps its cause", err: Fail(Usage, cause), code: Usage, msg: "bad flag"},
		{name: "failf formats", err: Failf(RunError, "%d failed", 2), code: RunError, msg: "2 failed"},
		{name: "wrapped", err: fmt.Errorf("run: %w", Fail(Interrupted, cause)), code: Interrupted, msg: "bad flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantNil {
				if tc.err != nil {
					t.Fatalf("got %v, want nil", tc.err)
				}
				return
			}
			ee, ok := As(tc.err)
			if !ok || ee.Code != tc.code {
				t.Fatalf("As(%v) = %v, %v; want code %d", tc.err, ee, ok, tc.code)
			}
			var msg string
			if ee.Err != nil {
				msg = ee.Err.Error()
			}
			if msg != tc.msg {
				t.Errorf("message %q, want %q", msg, tc.msg)
			}
		})
	}
	if _, ok := As(cause); ok {
		t.Error("a plain error carries no exit code")
	}
	if !errors.Is(Fail(Usage, cause), cause) {
		t.Error("Fail does not unwrap to its cause")
	}
}

func TestHarness(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if got := Harness(ctx); got != RunError {
		t.Errorf("live context: %d, want %d", got, RunError)
	}
	cancel()
	if got := Harness(ctx); got != Interrupted {
		t.Errorf("ended context: %d, want %d", got, Interrupted)
	}
}
