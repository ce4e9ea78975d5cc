package testbed

import (
	"github.com/chaosrun/chaosrun/internal/childproc"

	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// SuperviseCommand is the (hidden) chaosrun command through which the
// local testbed runs a command: service's program: `chaosrun supervise --
// PROGRAM ARGS…`, see Supervise.
const SuperviseCommand = "supervise"

// superviseGrace is how long the program has to exit after SIGTERM before
// the supervisor kills its process group.
const superviseGrace = 2 * time.Second

// Supervise runs args (a program and its arguments) as a child in this
// process's process group, which the local testbed made its own. When
// this process is told to stop — by the testbed, or by the kernel because
// the harness died (its parent-death signal) — it passes SIGTERM to the
// whole group, and after a grace kills what is left of it: the program and
// everything the program started, which the parent-death signal alone
// would leave running. When the program exits, what it left in the group
// is killed too. It returns the program's exit code (128+N for signal N).
func Supervise(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: chaosrun supervise -- PROGRAM [ARGS…]")
		return 2
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = childproc.AttrSignal(false, syscall.SIGKILL)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "chaosrun supervise: %v\n", err)
		return 127
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait() //nolint:errcheck // the exit code says it
		close(done)
	}()
	select {
	case <-done:
	case <-sigs:
		syscall.Kill(-syscall.Getpgrp(), syscall.SIGTERM) //nolint:errcheck // this process has SIGTERM handled
		select {
		case <-done:
		case <-time.After(superviseGrace):
		}
	}
	killGroup()
	<-done
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// killGroup kills every other process of this process's group.
func killGroup() {
	self, pgrp := os.Getpid(), syscall.Getpgrp()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		if g, ok := groupOf(pid); ok && g == pgrp {
			syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck // it may have gone
		}
	}
}

// groupOf is the process group of process pid.
func groupOf(pid int) (int, bool) {
	f, ok := ProcStat(pid)
	if !ok || len(f) < 3 {
		return 0, false
	}
	g, err := strconv.Atoi(f[2])
	return g, err == nil
}
