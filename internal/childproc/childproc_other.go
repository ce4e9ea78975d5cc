//go:build !linux

package childproc

import "syscall"

const diesWithParent = false

func setDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
