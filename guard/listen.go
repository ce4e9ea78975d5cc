package guard

import "net"

// IsLoopbackListen reports whether a listen address (host:port) binds
// loopback only: a control plane there needs no token.
func IsLoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
