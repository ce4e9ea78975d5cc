package guard

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Hosts lists the hosts a parameter value may address, in the order they
// appear: the host of every URL (any scheme, or "//host"), of every
// host:port, and every bare IP address — IPv4, IPv6 with or without
// brackets or a zone. A value may hold several, separated by commas,
// semicolons or blanks. IPs come back in their canonical form; words that
// are not addresses are left out.
func Hosts(v string) []string {
	var out []string
	for _, tok := range strings.FieldsFunc(v, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	}) {
		// As written, and without the quotes or brackets around it.
		if h, ok := tokenHost(tok); ok {
			out = append(out, h)
		}
		if t := strings.Trim(tok, `"'()<>`); t != tok {
			if h, ok := tokenHost(t); ok {
				out = append(out, h)
			}
		}
	}
	return out
}

// tokenHost is the host one token addresses, if it addresses one.
func tokenHost(tok string) (string, bool) {
	// An IP first: an IPv6 zone may hold "://" ("::0%://").
	if ip, ok := bareIP(tok); ok {
		return ip.String(), true
	}
	if i := strings.Index(tok, "//"); i >= 0 && (i == 0 || strings.HasSuffix(tok[:i], ":")) {
		return authorityHost(tok[i+2:])
	}
	if h, p, err := net.SplitHostPort(tok); err == nil && isPort(p) && !strings.ContainsAny(h, " /") {
		return nonEmpty(hostName(h))
	}
	return "", false
}

func nonEmpty(h string) (string, bool) { return h, h != "" }

// authorityHost is the host of a URL's authority and what follows it:
// "user@host:port/path" → host.
func authorityHost(rest string) (string, bool) {
	if i := strings.IndexAny(rest, "/?#\\"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	host := rest
	if strings.HasPrefix(rest, "[") {
		if i := strings.IndexByte(rest, ']'); i >= 0 {
			host = rest[1:i]
		}
	} else if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		host = rest[:i]
	}
	return nonEmpty(hostName(host))
}

// hostName normalises a host: an IP (in any form a resolver may read) in
// its canonical form, a name in lower case without a trailing dot.
func hostName(h string) string {
	if ip, ok := bareIP(h); ok {
		return ip.String()
	}
	if ip, ok := looseIPv4(h); ok {
		return ip.String()
	}
	h = strings.ToLower(h)
	if n := strings.TrimSuffix(h, "."); n != "" {
		return n
	}
	return h
}

// bareIP reads an IP address, IPv6 possibly in brackets or with a zone;
// IPv4-mapped IPv6 addresses come back as IPv4.
func bareIP(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if i := strings.IndexByte(s, '%'); i > 0 && strings.Contains(s[:i], ":") {
		s = s[:i]
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// looseIPv4 reads the IPv4 forms that C resolvers accept beyond the dotted
// quad: one to four parts, each decimal, octal (leading 0) or hex (0x),
// e.g. "0x7f.1", "10.1" or "167772165".
func looseIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(strings.TrimSuffix(s, "."), ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base, digits := 10, p
		switch {
		case strings.HasPrefix(strings.ToLower(p), "0x"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil || digits == "" && base != 16 {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(32-8*(len(vals)-1)) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}
