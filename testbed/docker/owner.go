package docker

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/chaosrun/chaosrun/testbed"
)

// Owner is this process's owner label value (see LabelOwner).
func Owner() string { return self() }

var self = sync.OnceValue(func() string { return OwnerOf(os.Getpid()) })

// OwnerOf is the owner label value of process pid: "PID:START@HOSTNAME",
// or "PID@HOSTNAME" where its start time cannot be read.
func OwnerOf(pid int) string {
	h, _ := os.Hostname()
	id := strconv.Itoa(pid)
	if start, ok := startTime(pid); ok {
		id += ":" + start
	}
	return id + "@" + h
}

// OwnedBy reports whether an owner label value names process pid on this
// host, whatever its start time.
func OwnedBy(owner string, pid int) bool {
	h, _ := os.Hostname()
	id, host, ok := splitOwner(owner)
	p, _, _ := strings.Cut(id, ":")
	return ok && host == h && p == strconv.Itoa(pid)
}

func splitOwner(owner string) (id, host string, ok bool) {
	i := strings.LastIndex(owner, "@")
	if i < 0 {
		return "", "", false
	}
	return owner[:i], owner[i+1:], true
}

// ownerAlive reports whether the harness named by an owner label still
// runs on this host: its PID runs and, when the label has one, with the
// same start time (else the PID was reused). Owners on other hosts count
// as alive: we cannot tell.
func ownerAlive(owner string) bool {
	id, host, ok := splitOwner(owner)
	if !ok {
		return false
	}
	if h, _ := os.Hostname(); h != host {
		return true
	}
	pidStr, start, hasStart := strings.Cut(id, ":")
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return false
	}
	now, ok := startTime(pid)
	if !ok {
		// No /proc (macOS), or the process is gone: signal 0 says whether
		// it runs (EPERM: it does, as another user's).
		err := syscall.Kill(pid, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	return !hasStart || now == start
}

// startTime is when process pid started, in clock ticks since boot, as
// text.
func startTime(pid int) (string, bool) {
	f, ok := testbed.ProcStat(pid)
	if !ok || len(f) < 20 {
		return "", false
	}
	return f[19], true
}
