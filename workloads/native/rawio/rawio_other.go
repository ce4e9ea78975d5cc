//go:build !linux

// Package rawio is Linux's raw socket I/O; elsewhere New returns nil and
// callers use the connection's own Read and Write.
package rawio

// IO is never made off Linux.
type IO struct{}

// New returns nil: no raw I/O here.
func New(any) *IO { return nil }

func (*IO) Read([]byte) (int, error) { panic("rawio: not on this system") }

func (*IO) Write([]byte) (int, error) { panic("rawio: not on this system") }
