package logs

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, wantErr string
	}{
		{"debug", ""}, {"info", ""}, {"warn", ""}, {"error", ""}, {"DEBUG", ""},
		{"verbose", `--log-level "verbose": want one of debug, info, warn, error`},
		{"info+2", `--log-level "info+2"`},
		{"", `--log-level ""`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.name)
		if got := errText(err); (tt.wantErr == "") != (got == "") || !strings.HasPrefix(got, tt.wantErr) {
			t.Errorf("Parse(%q) = %q, want %q", tt.name, got, tt.wantErr)
		}
	}
}

// TestLevelFilters: a record below the chosen level is dropped, one at or
// above is written; a context without a logger drops everything.
func TestLevelFilters(t *testing.T) {
	var buf bytes.Buffer
	ctx, err := Into(context.Background(), &buf, "info")
	if err != nil {
		t.Fatal(err)
	}
	From(ctx).Debug("hidden")
	From(ctx).Info("testbed up", "services", 3)
	if got := buf.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "level=INFO msg=\"testbed up\" services=3") {
		t.Errorf("wrote %q", got)
	}
	From(context.Background()).Error("to nowhere") // must not panic
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
