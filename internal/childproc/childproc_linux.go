package childproc

import "syscall"

const diesWithParent = true

func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
