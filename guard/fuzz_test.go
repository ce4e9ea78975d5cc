package guard

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzHosts checks that whatever Go's own parsers would connect to in a
// parameter — a URL's host, a host:port, an IP address — the guard
// refuses unless it is loopback, and that Hosts never returns junk.
func FuzzHosts(f *testing.F) {
	for _, s := range []string{
		"10.0.0.5", "10.0.0.5:80", "http://10.0.0.5/", "https://[2001:db8::1]:443/x", "fe80::1%eth0",
		"http://user@host:1/", "//evil.example/", "ws://0x7f.1/", "http://167772165/", "127.0.0.1,10.0.0.1",
		"::ffff:10.0.0.5", "[::1]:80", "http://[::ffff:127.0.0.1]/", "1.5", "api:transact", "http://a@b@c/",
	} {
		f.Add(s)
	}
	nothing, _ := Parse(nil)
	f.Fuzz(func(t *testing.T, v string) {
		for _, h := range Hosts(v) {
			if h == "" || strings.ContainsAny(h, ", ;\t\n") {
				t.Fatalf("Hosts(%q) has %q", v, h)
			}
		}
		refused := nothing.CheckParams(map[string]string{"P": v}) != nil
		if strings.ContainsAny(v, ",; \t\n\r") {
			return // several tokens: each is checked on its own below
		}
		var reaches []string
		if u, err := url.Parse(v); err == nil && u.Host != "" && u.Hostname() != "" {
			reaches = append(reaches, u.Hostname())
		}
		if ip, err := netip.ParseAddr(v); err == nil {
			reaches = append(reaches, ip.String())
		}
		if h, p, err := net.SplitHostPort(v); err == nil && h != "" && isPort(p) && !strings.ContainsAny(h, "/") {
			reaches = append(reaches, h)
		}
		for _, h := range reaches {
			if !refused && !nothing.Permits(h) {
				t.Fatalf("%q reaches %q, outside the blast radius, and the guard let it through (hosts %q)", v, h, Hosts(v))
			}
		}
	})
}
