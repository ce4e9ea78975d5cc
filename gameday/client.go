package gameday

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/user"
	"strconv"
	"strings"
	"time"
)

// clientTimeout bounds one call of the game day's API.
const clientTimeout = 30 * time.Second

// Client calls a running game day's API: what `chaosrun fault` does from a
// terminal.
type Client struct {
	base, token string
	http        *http.Client
}

// NewClient returns a client of the game day at rawURL, the URL the game
// day printed. A token in its query is used unless token is set.
func NewClient(rawURL, token string) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", rawURL)
	}
	if t := u.Query().Get("token"); t != "" && token == "" {
		token = t
	}
	u.RawQuery, u.Fragment, u.Path = "", "", strings.TrimSuffix(u.Path, "/")
	return &Client{base: u.String(), token: token, http: http.DefaultClient}, nil
}

// APIError is an answer of the game day that is not a success.
type APIError struct {
	Method, Path string
	// StatusCode is the HTTP status; 4xx means the request was wrong.
	StatusCode int
	Status     string
	// Message is the answer's error, else its body.
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %s: %s", e.Method, e.Path, e.Status, e.Message)
}

// List returns the faults in force.
func (c *Client) List(ctx context.Context) ([]ActiveFault, error) {
	var list []ActiveFault
	return list, c.do(ctx, http.MethodGet, "/api/faults", nil, &list)
}

// Add injects a fault and returns it as it is in force.
func (c *Client) Add(ctx context.Context, req FaultRequest) (ActiveFault, error) {
	var af ActiveFault
	return af, c.do(ctx, http.MethodPost, "/api/faults", req, &af)
}

// Clear reverts the fault called name; by is who asks, for the timeline.
func (c *Client) Clear(ctx context.Context, name, by string) error {
	return c.do(ctx, http.MethodDelete, "/api/faults/"+url.PathEscape(name)+"?by="+url.QueryEscape(by), nil, nil)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("the game day at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("the game day at %s: %w", c.base, err)
	}
	if resp.StatusCode >= 300 {
		e := &APIError{Method: method, Path: path, StatusCode: resp.StatusCode, Status: resp.Status, Message: strings.TrimSpace(string(b))}
		var answer struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &answer) == nil && answer.Error != "" {
			e.Message = answer.Error
		}
		return e
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("answer of %s: %w", path, err)
		}
	}
	return nil
}

// Refused reports whether err is the game day refusing a request as
// wrong (4xx), not failing to serve it.
func Refused(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.StatusCode >= 400 && ae.StatusCode < 500
}

// ParseAttrs reads a fault's attributes from NAME=NUMBER values (`chaosrun
// fault add --attr`).
func ParseAttrs(attrs []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, a := range attrs {
		k, v, ok := strings.Cut(a, "=")
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || k == "" {
			return nil, fmt.Errorf("--attr %q: want NAME=NUMBER, e.g. latency=2000", a)
		}
		out[strings.TrimSpace(k)] = f
	}
	return out, nil
}

// Terminal names who acts from this terminal, for the timeline: the user
// when known.
func Terminal() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username + " (terminal)"
	}
	return "terminal"
}
