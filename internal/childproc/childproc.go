// Package childproc says how the harness starts the programs it runs
// (targets, Toxiproxy, k6): each in its own process group, so that it and
// its children are signalled together, and, on Linux, killed by the kernel
// when the harness dies, even by SIGKILL (the parent-death signal). Other
// systems (macOS) have no parent-death signal: there a SIGKILLed harness
// leaves its children to `chaosrun clean` or the user.
package childproc

import "syscall"

// Attr is the SysProcAttr of a child: a process group of its own and, where
// the system has one, the parent-death signal SIGKILL.
func Attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(a)
	return a
}

// DiesWithParent reports whether a child started with Attr is killed by
// the kernel when the harness dies.
func DiesWithParent() bool { return diesWithParent }
