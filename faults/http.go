package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/chaosrun/chaosrun/scenario"
)

// HTTP fault kinds: toxics of the HTTP stage that `chaosrun serve toxiproxy
// --http-stage` puts behind every proxy, added through the same Toxiproxy
// API as the TCP toxics.
const (
	KindHTTPError   = "http_error"
	KindHTTPLatency = "http_latency"
)

// Counter is a Fault that counts what it hit; the schedule records the
// counts on the fault's revert event.
type Counter interface {
	Counts() map[string]int64
}

// ToxicStats are the counters of an HTTP toxic: requests the stage parsed
// while it was in force, those its matchers selected and those its
// toxicity picked (answered or delayed), and the seed of its choices.
type ToxicStats struct {
	Seen     int64 `json:"seen"`
	Matched  int64 `json:"matched"`
	Affected int64 `json:"affected"`
	Seed     int64 `json:"seed"`
}

// ToxicStatsAPI is a ToxicAPI that reads the counters of HTTP toxics; the
// faults find it by type assertion.
type ToxicStatsAPI interface {
	ToxicStats(ctx context.Context, proxy, name string) (ToxicStats, error)
}

// ToxicStats reads an HTTP toxic's counters from the stage of a proxy.
func (a *toxiproxyAPI) ToxicStats(ctx context.Context, proxy, name string) (ToxicStats, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	u := a.base + "/proxies/" + url.PathEscape(proxy) + "/toxics/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return ToxicStats{}, err
	}
	req.Header.Set("User-Agent", "chaosrun")
	resp, err := a.hc.Do(req)
	if err != nil {
		return ToxicStats{}, fmt.Errorf("toxiproxy: stats of toxic %q on proxy %q: %w", name, proxy, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusNotFound {
		return ToxicStats{}, fmt.Errorf("toxiproxy: stats of toxic %q on proxy %q: %w", name, proxy, ErrNotFound)
	}
	var t struct {
		Stats *ToxicStats `json:"stats"`
		Seed  int64       `json:"seed"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &t) != nil || t.Stats == nil {
		return ToxicStats{}, fmt.Errorf("toxiproxy: stats of toxic %q on proxy %q: HTTP %d: %s", name, proxy, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	t.Stats.Seed = t.Seed
	return *t.Stats, nil
}

// httpFault is an HTTP toxic on the stage of every proxy of an edge. On
// revert it reads the toxics' counters, for the run record.
type httpFault struct {
	toxicFault

	mu    sync.Mutex
	stats []ToxicStats // per proxy, read at the last revert
}

// newHTTPFault builds an HTTP toxic of the given kind; attrs are the kind's
// attributes as the stage reads them, summary says what they do.
func newHTTPFault(spec scenario.Fault, attrs map[string]any, summary string) (*httpFault, error) {
	tox, err := toxicity(spec)
	if err != nil {
		return nil, err
	}
	if m := spec.Match; m != nil {
		for k, v := range map[string]string{"method": m.Method, "path": m.Path, "path_regex": m.PathRegex} {
			if v != "" {
				attrs[k] = v
			}
		}
		if len(m.Header) > 0 {
			attrs["header"] = m.Header
		}
	}
	desc := fmt.Sprintf("%s %s on %s", spec.Kind, summary, spec.Edge)
	if w := describeMatch(spec.Match); w != "" {
		desc += " for " + w
	}
	if tox < 1 {
		desc += fmt.Sprintf(", %s of them", fmtNum(tox))
	}
	return &httpFault{toxicFault: toxicFault{
		spec:  spec,
		toxic: Toxic{Name: ToxicName(spec.Name), Type: spec.Kind, Stream: "upstream", Toxicity: float32(tox), Attributes: attrs},
		desc:  desc,
	}}, nil
}

// describeMatch says which requests a match selects: "POST /transact/cash".
func describeMatch(m *scenario.Match) string {
	if m == nil {
		return ""
	}
	var parts []string
	if m.Method != "" {
		parts = append(parts, strings.ToUpper(m.Method))
	}
	if m.Path != "" {
		parts = append(parts, m.Path)
	}
	if m.PathRegex != "" {
		parts = append(parts, "~"+m.PathRegex)
	}
	for _, k := range slices.Sorted(maps.Keys(m.Header)) {
		parts = append(parts, k+": "+m.Header[k])
	}
	return strings.Join(parts, " ")
}

// Revert reads each toxic's counters, then removes the toxics.
func (f *httpFault) Revert(ctx context.Context, env Env) error {
	if sa, ok := env.Toxics().(ToxicStatsAPI); ok {
		if proxies, err := proxiesFor(env, f.spec.Edge); err == nil {
			var stats []ToxicStats
			for _, p := range proxies {
				if s, err := sa.ToxicStats(ctx, p, f.toxic.Name); err == nil {
					stats = append(stats, s)
				} else if !errors.Is(err, ErrNotFound) {
					stats = nil
					break
				}
			}
			if len(stats) > 0 {
				f.mu.Lock()
				f.stats = stats
				f.mu.Unlock()
			}
		}
	}
	return f.toxicFault.Revert(ctx, env)
}

// Counts sums the counters read at the last revert: seen, matched and
// affected requests; nil before a revert read them.
func (f *httpFault) Counts() map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.stats) == 0 {
		return nil
	}
	out := map[string]int64{}
	for _, s := range f.stats {
		out["seen"] += s.Seen
		out["matched"] += s.Matched
		out["affected"] += s.Affected
	}
	return out
}

// Describe says what the fault does and, once reverted, what it hit.
func (f *httpFault) Describe() string {
	c := f.Counts()
	if c == nil {
		return f.desc
	}
	f.mu.Lock()
	seeds := make([]string, len(f.stats))
	for i, s := range f.stats {
		seeds[i] = fmt.Sprint(s.Seed)
	}
	f.mu.Unlock()
	return fmt.Sprintf("%s; hit %d of %d matched requests (%d seen), seed %s",
		f.desc, c["affected"], c["matched"], c["seen"], strings.Join(seeds, ","))
}
