package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// ErrKind says how a call to a dependency failed.
type ErrKind int

// Kinds of dependency failure.
const (
	// KindTimeout: the call took longer than the per-call timeout (answer 504).
	KindTimeout ErrKind = iota + 1
	// KindUnavailable: no answer (refused, reset, bad body) (answer 502).
	KindUnavailable
	// KindStatus: the dependency answered with a non-2xx status.
	KindStatus
	// KindCanceled: the caller's own context ended first.
	KindCanceled
)

func (k ErrKind) String() string {
	switch k {
	case KindTimeout:
		return "timeout"
	case KindUnavailable:
		return "unavailable"
	case KindStatus:
		return "status"
	case KindCanceled:
		return "canceled"
	}
	return "unknown"
}

// DepError is a failed call to a dependency.
type DepError struct {
	Dep    string
	Method string
	URL    string
	Kind   ErrKind
	Status int       // KindStatus only
	Body   ErrorBody // KindStatus only, when the body was a JSON ErrorBody
	Err    error
}

func (e *DepError) Error() string {
	switch e.Kind {
	case KindStatus:
		msg := e.Body.Error
		if msg == "" {
			msg = http.StatusText(e.Status)
		}
		return fmt.Sprintf("%s: %s %s: status %d: %s", e.Dep, e.Method, e.URL, e.Status, msg)
	default:
		return fmt.Sprintf("%s: %s %s: %s: %v", e.Dep, e.Method, e.URL, e.Kind, e.Err)
	}
}

func (e *DepError) Unwrap() error { return e.Err }

// KindOf returns the kind of a *DepError in err's chain, or 0.
func KindOf(err error) ErrKind {
	var de *DepError
	if errors.As(err, &de) {
		return de.Kind
	}
	return 0
}

// IsTimeout says whether err is a dependency call that timed out.
func IsTimeout(err error) bool { return KindOf(err) == KindTimeout }

// Client calls one dependency: its replicas in round-robin, each call bounded by a timeout.
type Client struct {
	name    string
	addrs   []string
	timeout time.Duration
	hc      *http.Client
	next    atomic.Uint64
}

// NewClient returns a client to dependency name at addrs (host:port, at least one).
func NewClient(name string, addrs []string, timeout time.Duration) (*Client, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("dependency %s: no address given", name)
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("dependency %s: timeout %s must be positive", name, timeout)
	}
	tr := &http.Transport{
		Proxy:                 nil, // dependencies are always reached directly
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &Client{
		name: name, addrs: append([]string(nil), addrs...), timeout: timeout,
		hc: &http.Client{Transport: tr},
	}, nil
}

// Name is the dependency's name.
func (c *Client) Name() string { return c.name }

// Close drops idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// pick returns the next replica, round-robin.
func (c *Client) pick() string {
	n := c.next.Add(1) - 1
	return c.addrs[n%uint64(len(c.addrs))]
}

// PostJSON posts in as JSON to path and decodes a 2xx answer into out (if non-nil).
func (c *Client) PostJSON(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: POST %s: encode request: %w", c.name, path, err)
	}
	return c.Do(ctx, http.MethodPost, path, body, out)
}

// GetJSON gets path and decodes a 2xx answer into out (if non-nil).
func (c *Client) GetJSON(ctx context.Context, path string, out any) error {
	return c.Do(ctx, http.MethodGet, path, nil, out)
}

// Do makes one call to the next replica. Failures are *DepError.
func (c *Client) Do(ctx context.Context, method, path string, body []byte, out any) error {
	url := "http://" + c.pick() + path
	fail := func(kind ErrKind, err error) error {
		return &DepError{Dep: c.name, Method: method, URL: url, Kind: kind, Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	classify := func(err error) error {
		switch {
		case ctx.Err() != nil:
			return fail(KindCanceled, err)
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return fail(KindTimeout, fmt.Errorf("no answer within %s: %w", c.timeout, err))
		}
		return fail(KindUnavailable, err)
	}

	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(cctx, method, url, rd)
	if err != nil {
		return fail(KindUnavailable, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return classify(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return classify(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		de := &DepError{Dep: c.name, Method: method, URL: url, Kind: KindStatus, Status: resp.StatusCode}
		_ = json.Unmarshal(data, &de.Body)
		return de
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fail(KindUnavailable, fmt.Errorf("decode answer: %w", err))
		}
	}
	return nil
}
