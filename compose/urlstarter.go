package compose

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/chaosrun/chaosrun/guard"
)

// URLStarter writes a starter scenario for a service that already runs at
// rawURL (chaosrun init --url): the service as external:, native load of
// GET on the URL's path and query, a latency fault on the load's way to it
// and assertions to tighten. A host other than loopback goes in
// allow_targets, where the blast radius allows it.
func URLStarter(rawURL string) (*Starter, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("--url %q: want an http(s) URL of a running service, e.g. http://127.0.0.1:8080/health (no user:password)", rawURL)
	}
	if u.Scheme == "https" {
		return nil, fmt.Errorf("--url %q: the load reaches the service through a TCP proxy and sends plain HTTP; give its http:// address", rawURL)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if strings.ContainsAny(path, "{}") {
		return nil, fmt.Errorf("--url %q: its path or query holds { or }, which scenario paths read as templates; write them as {{ and }} in the scenario yourself", rawURL)
	}
	name := "app"
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nname: %s-chaos\ndescription: >\n  A starter scenario for the service at %s: tighten its assertions to your\n  SLOs, set the rate your users send, then see what a slow dependency does.\n", name, u.Redacted())
	if loopback, _ := guard.Parse(nil); !loopback.Permits(net.JoinHostPort(host, port)) {
		if _, err := guard.Parse([]string{host}); err != nil {
			return nil, fmt.Errorf("--url %q: %w", rawURL, err)
		}
		fmt.Fprintf(&b, "allow_targets: [%q]   # the load may reach this host besides loopback\n", host)
	}
	fmt.Fprintf(&b, "services:\n  %s:\n    external: %q   # started by you; chaosrun starts nothing\n    health: tcp\n", name, net.JoinHostPort(host, port))
	fmt.Fprintf(&b, "workload:\n  engine: native\n  duration: 60s\n  streams:\n    get:\n      target: %s\n      path: %q\n      timeout: 5s\n      tags: {api: get}\n      arrival: {rate: 20}   # requests a second: set the rate your users send\n", name, path)
	fmt.Fprintf(&b, "faults:\n  - name: slow-%s\n    kind: latency\n    edge: workload->%s   # the load reaches %s through this proxy\n    start: 20s\n    duration: 20s\n    attributes: {latency: 300}\n", name, name, name)
	fmt.Fprintf(&b, "assertions:\n  - name: p99-before\n    metric: http_req_duration{api:get}\n    window: before slow-%s\n    checks: [\"p(99) < 500ms\"]\n", name)
	fmt.Fprintf(&b, "  - name: p99-during\n    metric: http_req_duration{api:get}\n    window: during slow-%s\n    settle: 2s\n    checks: [\"p(99) < 1s\"]\n", name)
	b.WriteString("  - name: errors\n    metric: http_req_failed{api:get}\n    window: whole\n    checks: [\"rate < 0.01\"]\n")
	return &Starter{Name: name + "-chaos", Scenario: b.String()}, nil
}
