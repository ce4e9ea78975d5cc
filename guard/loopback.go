package guard

import (
	"net"
	"net/netip"
	"strings"
)

// IsLoopbackListen reports whether a listen address (host:port) binds
// loopback only: a control plane there needs no token. ":port" and
// "0.0.0.0:port" bind every interface; a bare host is no listen address.
func IsLoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopbackName(host)
}

// IsLoopbackHost reports whether a dial address or an HTTP Host header
// (host or host:port, IPv6 in brackets) names loopback: "localhost",
// 127.0.0.0/8 or ::1.
func IsLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return isLoopbackName(strings.Trim(host, "[]"))
}

// isLoopbackName reports whether a bare host is "localhost" or a loopback IP.
func isLoopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
