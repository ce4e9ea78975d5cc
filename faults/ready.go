package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// WaitForProxies polls the Toxiproxy API at baseURL (which may carry the
// token as its password: http://:TOKEN@host:port) until every named proxy
// exists, or ctx ends. The error says what was last wrong: no answer, a
// refused token, or which proxies are missing.
func WaitForProxies(ctx context.Context, baseURL string, names []string, every time.Duration) error {
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	hc := &http.Client{Timeout: CallTimeout}
	var last error
	for {
		missing, err := missingProxies(ctx, hc, strings.TrimRight(baseURL, "/")+"/proxies", names)
		switch {
		case err == nil && len(missing) == 0:
			return nil
		case err == nil:
			last = fmt.Errorf("toxiproxy has no proxy %s", strings.Join(missing, ", "))
		default:
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for toxiproxy: %w (last: %v)", context.Cause(ctx), last)
		case <-time.After(every):
		}
	}
}

// missingProxies lists the names GET /proxies does not show.
func missingProxies(ctx context.Context, hc *http.Client, url string, names []string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "chaosrun")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, errors.New("toxiproxy refused the token (HTTP 401): give the run's token (--token or CHAOSRUN_TOKEN)")
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET /proxies: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var have map[string]json.RawMessage
	if err := json.Unmarshal(body, &have); err != nil {
		return nil, fmt.Errorf("GET /proxies: unreadable answer: %w", err)
	}
	var missing []string
	for _, n := range names {
		if _, ok := have[n]; !ok {
			missing = append(missing, n)
		}
	}
	slices.Sort(missing)
	return missing, nil
}
