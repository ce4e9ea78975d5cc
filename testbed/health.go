package testbed

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
)

// waitHealth waits until an instance at addr is healthy: its health path
// answers 200, its port accepts ("tcp"), or its health command (templated
// with vars, run on this machine) exits 0.
func waitHealth(ctx context.Context, addr string, h scenario.Health, vars scenario.TemplateVars, timeout time.Duration) error {
	if len(h.Command) == 0 {
		check := h.Check
		if check == "" {
			check = "/healthz"
		}
		return waitService(ctx, addr, check, timeout)
	}
	argv, err := scenario.ExpandAll(h.Command, vars)
	if err != nil {
		return fmt.Errorf("health command: %w", err)
	}
	return waitCommand(ctx, argv, timeout)
}

// waitCommand runs argv until it exits 0 (each try bounded to 2 s), or
// timeout passes.
func waitCommand(ctx context.Context, argv []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		tctx, tcancel := context.WithTimeout(ctx, 2*time.Second)
		out, err := exec.CommandContext(tctx, argv[0], argv[1:]...).CombinedOutput()
		tcancel()
		if err == nil {
			return nil
		}
		last = fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(tail(string(out), 200)))
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// healthName says what health was waited for, for errors.
func healthName(h scenario.Health) string {
	if len(h.Command) > 0 {
		return "command " + h.String()
	}
	if h.Check == "" {
		return "/healthz"
	}
	return h.Check
}

// splitAddr splits host:port; the port is 0 when it does not parse.
func splitAddr(addr string) (string, int) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	port, _ := strconv.Atoi(p)
	return host, port
}
