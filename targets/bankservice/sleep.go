package bankservice

import (
	"context"
	"time"
)

// work simulates d of service time, holding the caller's worker; it ends early if
// ctx ends.
func work(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
