package toxiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
)

// proxySpec is one --proxy flag: a proxy created at start.
type proxySpec struct {
	Name     string `json:"name"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
	Enabled  bool   `json:"enabled"`
}

// parseProxy reads NAME=LISTEN=UPSTREAM.
func parseProxy(v string) (proxySpec, error) {
	parts := strings.Split(v, "=")
	if len(parts) != 3 || parts[0] == "" {
		return proxySpec{}, fmt.Errorf("%q is not NAME=LISTEN=UPSTREAM", v)
	}
	for _, addr := range parts[1:] {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return proxySpec{}, fmt.Errorf("%q: %q is not HOST:PORT", v, addr)
		}
	}
	return proxySpec{Name: parts[0], Listen: parts[1], Upstream: parts[2], Enabled: true}, nil
}

// createProxies creates each proxy through the API handler itself, so
// that it gets what a proxy created over HTTP gets (its HTTP stage).
func createProxies(h http.Handler, proxies []proxySpec) error {
	for _, p := range proxies {
		body, _ := json.Marshal(p)
		req := httptest.NewRequest(http.MethodPost, "/proxies", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			return fmt.Errorf("--proxy %s=%s=%s: %d %s", p.Name, p.Listen, p.Upstream, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	}
	return nil
}
