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
func Attr() *syscall.SysProcAttr { return AttrSignal(true, syscall.SIGKILL) }

// AttrSignal is the SysProcAttr of a child in a process group of its own
// (when group) that gets sig when the harness dies, where the system has a
// parent-death signal.
func AttrSignal(group bool, sig syscall.Signal) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: group}
	setDeathSignal(a, sig)
	return a
}

// DiesWithParent reports whether a child started with Attr is killed by
// the kernel when the harness dies.
func DiesWithParent() bool { return diesWithParent }
