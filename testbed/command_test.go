package testbed

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
)

func TestCommandArgs(t *testing.T) {
	svc := &scenario.Service{Command: []string{"redis-server", "--port", "{port}", "--name=x{port}", "--store={dep.store}"}, Config: map[string]string{"max-memory": "64mb"},
		Env: map[string]string{"STORE_ADDR": "{dep.store}", "SELF": "{instance}:{port}", "LITERAL": "{{port}"}}
	args, env, err := commandArgs("cache", svc, map[string][]string{"store": {"127.0.0.1:1", "127.0.0.1:2"}}, 4242)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"redis-server", "--port", "4242", "--name=x4242", "--store=127.0.0.1:1,127.0.0.1:2"}; !slices.Equal(args, want) {
		t.Errorf("args = %v, want %v", args, want)
	}
	want := []string{"CHAOSRUN_CONFIG_MAX_MEMORY=64mb", "CHAOSRUN_DEP_STORE=127.0.0.1:1,127.0.0.1:2", "CHAOSRUN_INSTANCE=cache", "CHAOSRUN_PORT=4242",
		"LITERAL={port}", "SELF=cache:4242", "STORE_ADDR=127.0.0.1:1,127.0.0.1:2"}
	if !slices.Equal(env, want) {
		t.Errorf("env = %v, want %v", env, want)
	}
}

func TestWaitServiceTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := waitService(context.Background(), addr, scenario.HealthTCP, 2*time.Second); err != nil {
		t.Errorf("listening port: %v", err)
	}
	ln.Close()
	if err := waitService(context.Background(), addr, scenario.HealthTCP, 300*time.Millisecond); err == nil {
		t.Error("closed port reported ready")
	}
}

func TestWaitHealthCommand(t *testing.T) {
	dir := t.TempDir()
	ok := scenario.Health{Command: []string{"test", "-d", dir}}
	if err := waitHealth(context.Background(), "", ok, scenario.TemplateVars{}, 2*time.Second); err != nil {
		t.Errorf("a command that exits 0: %v", err)
	}
	bad := scenario.Health{Command: []string{"test", "-f", dir + "/{instance}"}}
	err := waitHealth(context.Background(), "", bad, scenario.TemplateVars{Instance: "nope"}, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "/nope") {
		t.Errorf("a command that fails: %v, want a timeout naming the expanded command", err)
	}
}

func TestImageOnlyServiceIsRefusedLocally(t *testing.T) {
	l := &Local{}
	_, err := l.startService(context.Background(), "cache", &scenario.Service{Image: "x:1", Port: 1}, nil)
	if err == nil {
		t.Fatal("an image-only service started on the local testbed")
	}
}

// startUnchecked starts svc's program (command:) on a probed port and
// does not wait for its health.
func startUnchecked(t *testing.T, l *Local, name string, svc *scenario.Service) *process {
	t.Helper()
	res, err := probePort()
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.startCommand(context.Background(), name, svc, nil, res.port)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
