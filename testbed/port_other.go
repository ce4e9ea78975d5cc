//go:build !linux

package testbed

// reservePort probes a port: other systems let no second socket bind an
// address that one holds, address reuse or not (BSD semantics), so the
// port cannot be held for the program.
func reservePort() (reservation, error) { return probePort() }
