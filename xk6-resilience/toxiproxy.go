package resilience

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

// Fault event actions, the action tag of resilience_fault_events.
const (
	ActionCreateProxy = "create_proxy"
	ActionDeleteProxy = "delete_proxy"
	ActionEnable      = "enable"
	ActionDisable     = "disable"
	ActionAddToxic    = "add_toxic"
	ActionUpdateToxic = "update_toxic"
	ActionRemoveToxic = "remove_toxic"
	ActionReset       = "reset"
)

// toxiTimeout bounds each call to Toxiproxy's API.
const toxiTimeout = 10 * time.Second

// FaultEvent is one change a script made to Toxiproxy.
type FaultEvent struct {
	Proxy, Toxic, Action string
}

// Toxiproxy is a client of Toxiproxy's HTTP API. Every successful change is
// reported to OnChange.
type Toxiproxy struct {
	base     string
	token    string
	hc       *http.Client
	OnChange func(FaultEvent)
}

// Proxy is a Toxiproxy proxy definition.
type Proxy struct {
	Name     string `json:"name"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
	Enabled  bool   `json:"enabled"`
}

// Toxic is a toxic definition; Stream is "downstream" (default) or "upstream".
type Toxic struct {
	Name       string         `json:"name,omitempty"`
	Type       string         `json:"type,omitempty"`
	Stream     string         `json:"stream,omitempty"`
	Toxicity   *float64       `json:"toxicity,omitempty"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// NewToxiproxy returns a client of the API at baseURL (http://host:port);
// token, when set, is sent as a Bearer token.
func NewToxiproxy(baseURL, token string) (*Toxiproxy, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("toxiproxy: url %q: want http://HOST:PORT", baseURL)
	}
	hc := &http.Client{Timeout: toxiTimeout, CheckRedirect: noRedirects}
	return &Toxiproxy{base: strings.TrimRight(baseURL, "/"), token: token, hc: hc}, nil
}

// Host returns the API's host:port.
func (t *Toxiproxy) Host() string {
	u, _ := url.Parse(t.base)
	return u.Host
}

// CreateProxy creates a proxy.
func (t *Toxiproxy) CreateProxy(ctx context.Context, p Proxy) (json.RawMessage, error) {
	out, err := t.call(ctx, http.MethodPost, "/proxies", p)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy: create proxy %q (listen %s, upstream %s): %w", p.Name, p.Listen, p.Upstream, err)
	}
	t.emit(p.Name, "", ActionCreateProxy)
	return out, nil
}

// DeleteProxy deletes a proxy.
func (t *Toxiproxy) DeleteProxy(ctx context.Context, name string) error {
	if _, err := t.call(ctx, http.MethodDelete, "/proxies/"+url.PathEscape(name), nil); err != nil {
		return fmt.Errorf("toxiproxy: delete proxy %q: %w", name, err)
	}
	t.emit(name, "", ActionDeleteProxy)
	return nil
}

// Proxy returns a proxy with its toxics.
func (t *Toxiproxy) Proxy(ctx context.Context, name string) (json.RawMessage, error) {
	out, err := t.call(ctx, http.MethodGet, "/proxies/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy: get proxy %q: %w", name, err)
	}
	return out, nil
}

// Proxies returns every proxy by name.
func (t *Toxiproxy) Proxies(ctx context.Context) (json.RawMessage, error) {
	out, err := t.call(ctx, http.MethodGet, "/proxies", nil)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy: list proxies: %w", err)
	}
	return out, nil
}

// SetEnabled enables or disables a proxy (disabled: it refuses connections).
func (t *Toxiproxy) SetEnabled(ctx context.Context, name string, enabled bool) error {
	if _, err := t.call(ctx, http.MethodPost, "/proxies/"+url.PathEscape(name), map[string]bool{"enabled": enabled}); err != nil {
		return fmt.Errorf("toxiproxy: set proxy %q enabled=%v: %w", name, enabled, err)
	}
	action := ActionDisable
	if enabled {
		action = ActionEnable
	}
	t.emit(name, "", action)
	return nil
}

// AddToxic adds a toxic to a proxy; its name defaults to TYPE_STREAM, as Toxiproxy names it.
func (t *Toxiproxy) AddToxic(ctx context.Context, proxy string, tx Toxic) (json.RawMessage, error) {
	if tx.Type == "" {
		return nil, fmt.Errorf("toxiproxy: add toxic to proxy %q: type is required (latency, bandwidth, slow_close, timeout, reset_peer, slicer, limit_data)", proxy)
	}
	if tx.Stream == "" {
		tx.Stream = "downstream"
	}
	if tx.Name == "" {
		tx.Name = tx.Type + "_" + tx.Stream
	}
	out, err := t.call(ctx, http.MethodPost, "/proxies/"+url.PathEscape(proxy)+"/toxics", tx)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy: add %s toxic %q to proxy %q: %w", tx.Type, tx.Name, proxy, err)
	}
	t.emit(proxy, tx.Name, ActionAddToxic)
	return out, nil
}

// UpdateToxic changes a toxic's attributes or toxicity.
func (t *Toxiproxy) UpdateToxic(ctx context.Context, proxy, name string, tx Toxic) (json.RawMessage, error) {
	tx.Name, tx.Type, tx.Stream = "", "", ""
	out, err := t.call(ctx, http.MethodPost, "/proxies/"+url.PathEscape(proxy)+"/toxics/"+url.PathEscape(name), tx)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy: update toxic %q of proxy %q: %w", name, proxy, err)
	}
	t.emit(proxy, name, ActionUpdateToxic)
	return out, nil
}

// RemoveToxic removes a toxic from a proxy.
func (t *Toxiproxy) RemoveToxic(ctx context.Context, proxy, name string) error {
	if _, err := t.call(ctx, http.MethodDelete, "/proxies/"+url.PathEscape(proxy)+"/toxics/"+url.PathEscape(name), nil); err != nil {
		return fmt.Errorf("toxiproxy: remove toxic %q from proxy %q: %w", name, proxy, err)
	}
	t.emit(proxy, name, ActionRemoveToxic)
	return nil
}

// Reset enables every proxy and removes every toxic.
func (t *Toxiproxy) Reset(ctx context.Context) error {
	if _, err := t.call(ctx, http.MethodPost, "/reset", nil); err != nil {
		return fmt.Errorf("toxiproxy: reset: %w", err)
	}
	t.emit("", "", ActionReset)
	return nil
}

func (t *Toxiproxy) emit(proxy, toxic, action string) {
	if t.OnChange != nil {
		t.OnChange(FaultEvent{Proxy: proxy, Toxic: toxic, Action: action})
	}
}

// call sends one API request and returns the answer's body when it is 2xx.
// noRedirects hands a redirect back as the answer: the client never sends
// a request to an address the script did not name.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func (t *Toxiproxy) call(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode/100 == 3 {
		return nil, fmt.Errorf("%s %s: %s to %q: Toxiproxy's API does not redirect, and this client follows none (a redirect could lead around k6's --blacklist-ip)", method, path, resp.Status, resp.Header.Get("Location"))
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	return json.RawMessage(b), nil
}
