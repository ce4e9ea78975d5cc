package server

import (
	"fmt"
	"net"
	"sort"
	"strings"
)

// Deps maps a dependency name to its replicas' host:port addresses. It is a
// flag.Value for the repeatable --dep NAME=ADDR[,ADDR...] flag.
type Deps map[string][]string

// String lists the dependencies as NAME=ADDR,ADDR joined by spaces, sorted.
func (d Deps) String() string {
	names := make([]string, 0, len(d))
	for n := range d {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, n+"="+strings.Join(d[n], ","))
	}
	return strings.Join(parts, " ")
}

// Set parses one NAME=ADDR[,ADDR...]; naming a dependency twice adds replicas.
func (d Deps) Set(v string) error {
	name, addrs, ok := strings.Cut(v, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || addrs == "" {
		return fmt.Errorf("dependency %q: want NAME=HOST:PORT[,HOST:PORT...]", v)
	}
	for _, a := range strings.Split(addrs, ",") {
		a = strings.TrimSpace(a)
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return fmt.Errorf("dependency %s: address %q: want HOST:PORT (no scheme)", name, a)
		}
		d[name] = append(d[name], a)
	}
	return nil
}
