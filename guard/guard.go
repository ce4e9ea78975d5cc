// Package guard keeps a run's load and faults inside its blast radius:
// services the testbed started, loopback, and addresses the user allowed
// explicitly. Anything else is refused before a single request is sent.
package guard

import (
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
)

// Allowed is the set of addresses a run may send traffic to besides loopback.
type Allowed struct {
	hosts map[string]bool // host or host:port as the user wrote it
	addrs []netip.Addr    // literal IPs among them
}

// Parse reads --allow-target values (host or host:port).
func Parse(values []string) (*Allowed, error) {
	a := &Allowed{hosts: map[string]bool{}}
	for _, v := range values {
		v = strings.TrimSpace(v)
		host := v
		if h, _, err := net.SplitHostPort(v); err == nil {
			host = h
		}
		if host == "" {
			return nil, fmt.Errorf("--allow-target %q: want host or host:port", v)
		}
		a.hosts[strings.ToLower(v)] = true
		a.hosts[strings.ToLower(host)] = true
		if ip, ok := bareIP(host); ok {
			a.addrs = append(a.addrs, ip)
		}
	}
	return a, nil
}

// Add allows one more host or host:port (a service the testbed started).
func (a *Allowed) Add(hostport string) {
	b, _ := Parse([]string{hostport})
	for h := range b.hosts {
		a.hosts[h] = true
	}
	a.addrs = append(a.addrs, b.addrs...)
}

// Permits reports whether host (a name or IP, with or without port) is in
// the blast radius: loopback, "localhost", or allowed explicitly.
func (a *Allowed) Permits(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = hostName(strings.Trim(host, "[]"))
	if isLoopbackName(host) || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if a == nil {
		return false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		for _, allowed := range a.addrs {
			if allowed == ip.Unmap() {
				return true
			}
		}
	}
	return a.hosts[strings.ToLower(hostport)] || a.hosts[host]
}

// ParamError is a workload parameter that points outside the blast radius.
type ParamError struct {
	// Key is the parameter's name; Host what it points at.
	Key, Host string
}

func (e *ParamError) Error() string {
	return "workload.params." + e.Key + " points at " + e.Host + ", outside this run's blast radius (allowed: " + ParamsAllowed + ")"
}

// ParamsAllowed says what parameters may point at.
const ParamsAllowed = "services the testbed starts, loopback, and --allow-target/allow_targets entries"

// CheckParams refuses workload parameters that point outside the blast
// radius: any URL, host:port or bare IP in a value (see Hosts) whose host
// is not loopback and not allowed. The error is a *ParamError.
func (a *Allowed) CheckParams(params map[string]string) error {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if host, ok := a.Refused(Hosts(params[k])); ok {
			return &ParamError{Key: k, Host: host}
		}
	}
	return nil
}

// Refused is the first of hosts outside the blast radius, if there is one.
func (a *Allowed) Refused(hosts []string) (string, bool) {
	for _, h := range hosts {
		if !a.Permits(h) {
			return h, true
		}
	}
	return "", false
}

// ArgHosts lists the hosts a k6 command-line argument may address (an
// output, NAME=ARGUMENT, or a flag, --NAME=VALUE): Hosts of it with "="
// a separator too, so that "influxdb=http://10.0.0.5:8086" and
// "--local-ips=10.0.0.5" name 10.0.0.5. k6's --blacklist-ip covers the
// script's requests only: an output sends where its argument says.
func ArgHosts(arg string) []string { return Hosts(strings.ReplaceAll(arg, "=", " ")) }

// ExternalAllowed says what an external service may be.
const ExternalAllowed = "loopback, and --allow-target/allow_targets entries"

// CheckExternal refuses an external service (one the run does not start)
// whose address is neither loopback nor allowed explicitly: load and
// faults go to it, so it must be named as a target like any other. The
// error says what to do; what is allowed is ExternalAllowed.
func (a *Allowed) CheckExternal(hostport string) error {
	if a.Permits(hostport) {
		return nil
	}
	return fmt.Errorf("%s is outside this run's blast radius: add %s to allow_targets", hostport, hostport)
}

func isPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// BlockedRanges lists the IP ranges k6 must refuse (its --blacklist-ip):
// every IPv4 and IPv6 address except loopback and the allowed IPs.
func (a *Allowed) BlockedRanges() []netip.Prefix {
	keep4 := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	keep6 := []netip.Prefix{netip.MustParsePrefix("::1/128")}
	if a != nil {
		for _, ip := range a.addrs {
			if ip.Is4() {
				keep4 = append(keep4, netip.PrefixFrom(ip, 32))
			} else {
				keep6 = append(keep6, netip.PrefixFrom(ip, 128))
			}
		}
	}
	out := complement(netip.MustParsePrefix("0.0.0.0/0"), keep4)
	return append(out, complement(netip.MustParsePrefix("::/0"), keep6)...)
}

// complement returns the smallest set of prefixes covering all of space
// except the kept prefixes.
func complement(space netip.Prefix, keep []netip.Prefix) []netip.Prefix {
	for _, k := range keep {
		if k == space || (k.Bits() <= space.Bits() && k.Contains(space.Addr())) {
			return nil // space is entirely kept
		}
	}
	overlaps := false
	for _, k := range keep {
		if space.Overlaps(k) {
			overlaps = true
			break
		}
	}
	if !overlaps {
		return []netip.Prefix{space}
	}
	lo, hi := halves(space)
	return append(complement(lo, keep), complement(hi, keep)...)
}

// halves splits a prefix into its two sub-prefixes one bit longer.
func halves(p netip.Prefix) (netip.Prefix, netip.Prefix) {
	bits := p.Bits() + 1
	lo := netip.PrefixFrom(p.Addr(), bits)
	b := p.Addr().AsSlice()
	i := p.Bits() / 8
	b[i] |= 0x80 >> (p.Bits() % 8)
	hiAddr, _ := netip.AddrFromSlice(b)
	return lo, netip.PrefixFrom(hiAddr, bits)
}

// K6Flags is the k6 command-line part of the guard.
func (a *Allowed) K6Flags() []string {
	ranges := a.BlockedRanges()
	s := make([]string, len(ranges))
	for i, r := range ranges {
		s[i] = r.String()
	}
	return []string{"--blacklist-ip", strings.Join(s, ",")}
}
