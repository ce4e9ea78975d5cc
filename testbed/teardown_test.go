package testbed

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
)

// TestDownHoldsItsDeadline: a service that ignores SIGTERM is killed by
// the teardown's deadline, not after a grace of its own; Down returns by
// then and nothing is left.
func TestDownHoldsItsDeadline(t *testing.T) {
	l := &Local{LogDir: t.TempDir()}
	var pids []int
	for _, name := range []string{"a", "b", "c"} {
		svc := &scenario.Service{Command: []string{"sh", "-c", `trap "" TERM; exec sleep 300`}}
		p := startUnchecked(t, l, name, svc)
		pids = append(pids, p.cmd.Process.Pid)
	}
	time.Sleep(200 * time.Millisecond) // the traps are set
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	t0 := time.Now()
	err := l.Down(ctx)
	took := time.Since(t0)
	t.Logf("Down took %s: %v", took, err)
	if took > 1200*time.Millisecond {
		t.Errorf("Down took %s with a deadline of 1s", took)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("pid %d outlived the teardown", pid)
			syscall.Kill(-pid, syscall.SIGKILL) //nolint:errcheck
		}
	}
	if err != nil && !strings.Contains(err.Error(), "killed") {
		t.Errorf("unexpected error: %v", err)
	}
}
