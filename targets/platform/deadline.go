package platform

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// callerDeadlineKey keys the deadline the caller announced in HeaderDeadline.
type callerDeadlineKey struct{}

// callerDeadline is the deadline announced by the caller, and whether this
// server enforces it (--deadlines on) or only records it (off).
type callerDeadline struct {
	at       time.Time
	enforced bool
}

// ParseDeadline turns a HeaderDeadline value (the caller's remaining budget in
// milliseconds, possibly zero or negative) into an absolute deadline at arrival.
func ParseDeadline(v string, arrival time.Time) (time.Time, error) {
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("header %s %q: want whole milliseconds: %w", HeaderDeadline, v, err)
	}
	const maxMs = int64(24 * time.Hour / time.Millisecond)
	ms = min(ms, maxMs)
	return arrival.Add(time.Duration(ms) * time.Millisecond), nil
}

// FormatBudget renders a budget as a HeaderDeadline value (whole ms, rounded down, ≥ 0).
func FormatBudget(d time.Duration) string {
	return strconv.FormatInt(max(int64(d/time.Millisecond), 0), 10)
}

// WithCallerDeadline records the caller's deadline at in ctx; when enforce is
// set it also becomes ctx's deadline (the returned cancel must be called).
func WithCallerDeadline(ctx context.Context, at time.Time, enforce bool) (context.Context, context.CancelFunc) {
	ctx = context.WithValue(ctx, callerDeadlineKey{}, callerDeadline{at: at, enforced: enforce})
	if enforce {
		return context.WithDeadline(ctx, at)
	}
	return ctx, func() {}
}

// CallerBudget is the time left before the deadline the caller announced in
// HeaderDeadline, enforced or not (with --deadlines off it is only recorded).
// A client may forward it so that downstream servers can count wasted work.
func CallerBudget(ctx context.Context) (time.Duration, bool) {
	cd, ok := ctx.Value(callerDeadlineKey{}).(callerDeadline)
	if !ok {
		return 0, false
	}
	return time.Until(cd.at), true
}

// ParseRetryAfter reads a Retry-After (HeaderRetryAfter) in whole
// seconds; missing or not a number of seconds counts as one second.
func ParseRetryAfter(v string) time.Duration {
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}
