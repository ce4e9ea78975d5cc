package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
)

// harnessEnv makes the test binary a stand-in harness: it starts one
// command: service through the local testbed, then waits to be killed.
const harnessEnv = "CHAOSRUN_TESTBED_TEST_HARNESS"

// TestMain lets the test binary play the parts the chaosrun binary plays
// for the local testbed: the supervisor, and a harness to kill.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == SuperviseCommand && os.Args[2] == "--" {
		os.Exit(Supervise(os.Args[3:], os.Stderr))
	}
	if who := os.Getenv(serverEnv); who != "" {
		os.Exit(testServer(who))
	}
	if pidFile := os.Getenv(harnessEnv); pidFile != "" {
		standInHarness(pidFile)
	}
	os.Exit(m.Run())
}

// standInHarness starts a service whose program leaves a child of its own
// running in the background, writing that child's PID to pidFile.
func standInHarness(pidFile string) {
	l := &Local{Binary: os.Args[0], LogDir: filepath.Dir(pidFile)}
	svc := &scenario.Service{Command: []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile + "; exec sleep 301"}}
	res, err := probePort()
	if err == nil {
		_, err = l.startCommand(context.Background(), "svc", svc, nil, res.port)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	select {}
}

// TestCommandServiceGroupDiesWithTheHarness: a command: service's program
// and what it started in the background die when the harness is killed
// (SIGKILL: no teardown), not only the program (the parent-death signal
// reaches direct children only). About 1 s.
func TestCommandServiceGroupDiesWithTheHarness(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "bg.pid")
	h := exec.Command(os.Args[0], "-test.run=^$")
	h.Env = append(os.Environ(), harnessEnv+"="+pidFile)
	h.Stderr = os.Stderr
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	defer h.Process.Kill() //nolint:errcheck
	var bg int
	for deadline := time.Now().Add(10 * time.Second); bg == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		bg, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if bg == 0 {
		t.Fatal("the service never started its background child")
	}
	group, ok := groupOf(bg)
	if !ok {
		t.Fatalf("no process group for pid %d", bg)
	}
	members := groupMembers(group)
	t.Logf("service group %d: %v", group, members)
	h.Process.Kill() //nolint:errcheck
	h.Wait()         //nolint:errcheck
	deadline := time.Now().Add(5 * time.Second)
	for len(groupMembers(group)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := groupMembers(group); len(left) > 0 {
		t.Errorf("outlived the killed harness: %v", left)
		syscall.Kill(-group, syscall.SIGKILL) //nolint:errcheck
	}
}

// groupMembers lists the live processes of a process group with their
// command lines.
func groupMembers(group int) map[int]string {
	out := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		stat, ok := ProcStat(pid)
		if !ok || len(stat) < 3 || stat[2] != strconv.Itoa(group) || stat[0] == "Z" {
			continue // another group's, or a zombie: dead, waiting to be reaped
		}
		cl, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		out[pid] = strings.ReplaceAll(string(cl), "\x00", " ")
	}
	return out
}
