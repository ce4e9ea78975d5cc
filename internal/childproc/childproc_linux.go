package childproc

import "syscall"

const diesWithParent = true

func setDeathSignal(a *syscall.SysProcAttr, sig syscall.Signal) { a.Pdeathsig = sig }
