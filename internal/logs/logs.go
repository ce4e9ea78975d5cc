// Package logs carries the harness's own diagnostics: a log/slog logger
// in a command's context, writing at the level --log-level chose. Results,
// verdicts and progress are not diagnostics; they stay on stdout and
// stderr as the commands print them.
package logs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Levels are the names --log-level takes, most verbose first.
var Levels = []string{"debug", "info", "warn", "error"}

// DefaultLevel says only what went wrong without failing the run.
const DefaultLevel = "warn"

// Parse is the level a name gives; an unknown name is an error that lists
// the allowed ones.
func Parse(name string) (slog.Level, error) {
	switch strings.ToLower(name) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("--log-level %q: want one of %s", name, strings.Join(Levels, ", "))
}

// Into is ctx carrying a logger that writes text records at level and
// above to w.
func Into(ctx context.Context, w io.Writer, level string) (context.Context, error) {
	l, err := Parse(level)
	if err != nil {
		return ctx, err
	}
	return With(ctx, slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))), nil
}

type key struct{}

// With is ctx carrying log.
func With(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, key{}, log)
}

// discard drops every record: what a context with no logger gets.
var discard = slog.New(slog.DiscardHandler)

// From is the logger ctx carries, or one that drops every record.
func From(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(key{}).(*slog.Logger); ok {
		return l
	}
	return discard
}
