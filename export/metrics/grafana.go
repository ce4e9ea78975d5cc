package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/chaosrun/chaosrun/record"
)

// Annotation is a Grafana annotation as its HTTP API takes it
// (POST /api/annotations): a region from Time to TimeEnd (ms since epoch).
type Annotation struct {
	ID      int64    `json:"id,omitempty"`
	Time    int64    `json:"time"`
	TimeEnd int64    `json:"timeEnd,omitempty"`
	Tags    []string `json:"tags"`
	Text    string   `json:"text"`
}

// AnnotationTag marks every annotation of the export; the dashboard's
// annotation query filters on it.
const AnnotationTag = "chaosrun"

// Annotations are a run's fault windows and the run itself as Grafana
// annotations, tagged chaosrun, the kind (fault, run), scenario:NAME and
// run:ID.
func Annotations(r *record.Run) []Annotation {
	base := []string{AnnotationTag, "scenario:" + r.Scenario, "run:" + RunID(r)}
	tags := func(more ...string) []string { return append(append([]string(nil), base...), more...) }
	var out []Annotation
	open := map[string]int{}
	for _, f := range r.Faults {
		what := fmt.Sprintf("fault %s (%s on %s)", f.Fault, f.Kind, f.Target)
		switch f.Action {
		case record.Applied:
			open[f.Fault] = len(out)
			out = append(out, Annotation{Time: f.Actual.UnixMilli(), TimeEnd: r.End.UnixMilli(),
				Tags: tags("fault", "fault:"+f.Fault), Text: what + ": " + f.Detail})
		case record.Reverted:
			if i, ok := open[f.Fault]; ok {
				out[i].TimeEnd = f.Actual.UnixMilli()
				delete(open, f.Fault)
			}
		case record.Failed:
			out = append(out, Annotation{Time: f.Actual.UnixMilli(), Tags: tags("fault", "fault:"+f.Fault, "failed"),
				Text: what + " failed: " + f.Error})
		}
	}
	out = append(out, Annotation{Time: r.Start.UnixMilli(), TimeEnd: r.End.UnixMilli(), Tags: tags("run"),
		Text: fmt.Sprintf("chaosrun %s: %s", r.Scenario, outcome(r))})
	return out
}

// outcome says in a few words how a run ended.
func outcome(r *record.Run) string {
	var failed []string
	for _, v := range r.Verdicts {
		if !v.Pass {
			failed = append(failed, v.Assertion)
		}
	}
	switch {
	case len(failed) > 0:
		return "breached: " + strings.Join(failed, ", ")
	case r.Incomplete:
		return "incomplete"
	case len(r.Verdicts) == 0:
		return "no verdicts"
	}
	return fmt.Sprintf("all %d checks held", len(r.Verdicts))
}

// grafana posts annotations to a Grafana's HTTP API.
type grafana struct {
	base   *url.URL
	token  string
	client *http.Client
}

func newGrafana(base, token string, client *http.Client) (*grafana, error) {
	u, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil {
		return nil, fmt.Errorf("grafana URL %q: %w", base, err)
	}
	return &grafana{base: u, token: token, client: client}, nil
}

// annotate posts the annotations the Grafana does not hold yet (same run
// tag, time and text), so that exporting a run twice adds nothing.
func (g *grafana) annotate(ctx context.Context, as []Annotation, runTag string) (int, error) {
	var have []Annotation
	q := url.Values{"tags": {runTag}, "limit": {"1000"}, "type": {"annotation"}}
	if err := g.do(ctx, http.MethodGet, "/api/annotations?"+q.Encode(), nil, &have); err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, a := range have {
		seen[annotationKey(a)] = true
	}
	n := 0
	for _, a := range as {
		if seen[annotationKey(a)] {
			continue
		}
		if err := g.do(ctx, http.MethodPost, "/api/annotations", a, nil); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func annotationKey(a Annotation) string {
	return fmt.Sprintf("%d\x00%s", a.Time, a.Text)
}

func (g *grafana) do(ctx context.Context, method, path string, body, into any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base.String()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if g.token != "" {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return fmt.Errorf("grafana: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("grafana: %s %s: %s: %s", method, strings.SplitN(path, "?", 2)[0], resp.Status, bytes.TrimSpace(b))
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			return fmt.Errorf("grafana: %s %s: %w", method, path, err)
		}
	}
	return nil
}
