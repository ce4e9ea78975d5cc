package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// CallTimeout bounds each call to Toxiproxy's API.
const CallTimeout = 5 * time.Second

// NewToxiproxyAPI is the ToxicAPI of the Toxiproxy server at baseURL
// ("http://127.0.0.1:8474"). Proxy and toxic names are path-escaped, so
// names like "bank->ledger.0" reach the server intact.
func NewToxiproxyAPI(baseURL string) ToxicAPI {
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	return &toxiproxyAPI{base: strings.TrimRight(baseURL, "/"), hc: &http.Client{}}
}

type toxiproxyAPI struct {
	base string
	hc   *http.Client
}

func (a *toxiproxyAPI) AddToxic(ctx context.Context, proxy string, t Toxic) error {
	body, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("toxiproxy: add toxic %q to proxy %q: %w", t.Name, proxy, err)
	}
	_, err = a.do(ctx, http.MethodPost, "/proxies/"+url.PathEscape(proxy)+"/toxics", body)
	if err != nil {
		return fmt.Errorf("toxiproxy: add %s toxic %q to proxy %q: %w", t.Type, t.Name, proxy, err)
	}
	return nil
}

func (a *toxiproxyAPI) RemoveToxic(ctx context.Context, proxy, name string) error {
	_, err := a.do(ctx, http.MethodDelete, "/proxies/"+url.PathEscape(proxy)+"/toxics/"+url.PathEscape(name), nil)
	if err != nil {
		return fmt.Errorf("toxiproxy: remove toxic %q from proxy %q: %w", name, proxy, err)
	}
	return nil
}

// ListToxics reads the proxy's toxics back.
func (a *toxiproxyAPI) ListToxics(ctx context.Context, proxy string) ([]Toxic, error) {
	body, err := a.do(ctx, http.MethodGet, "/proxies/"+url.PathEscape(proxy)+"/toxics", nil)
	var out []Toxic
	if err == nil {
		err = json.Unmarshal(body, &out)
	}
	if err != nil {
		return nil, fmt.Errorf("toxiproxy: list the toxics of proxy %q: %w", proxy, err)
	}
	return out, nil
}

func (a *toxiproxyAPI) SetProxyEnabled(ctx context.Context, proxy string, enabled bool) error {
	body, _ := json.Marshal(map[string]bool{"enabled": enabled})
	_, err := a.do(ctx, http.MethodPatch, "/proxies/"+url.PathEscape(proxy), body)
	if err != nil {
		verb := "disable"
		if enabled {
			verb = "enable"
		}
		return fmt.Errorf("toxiproxy: %s proxy %q: %w", verb, proxy, err)
	}
	return nil
}

// do sends one request and gives the answer's body; a non-2xx answer is
// an error carrying Toxiproxy's message, 404 wrapping ErrNotFound.
func (a *toxiproxyAPI) do(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "chaosrun")
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return msg, nil
	}
	var apiErr struct {
		Error string `json:"error"`
	}
	text := strings.TrimSpace(string(msg))
	if json.Unmarshal(msg, &apiErr) == nil && apiErr.Error != "" {
		text = apiErr.Error
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("HTTP %d: %s: %w", resp.StatusCode, text, ErrNotFound)
	}
	return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, text)
}
