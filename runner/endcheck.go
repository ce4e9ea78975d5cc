package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/testbed"
)

// endCheckTimeout bounds one end-of-run check.
const endCheckTimeout = 10 * time.Second

// runEndChecks calls each scenario end check on the first replica of its
// service; a check that cannot be called counts as failed.
func runEndChecks(ctx context.Context, sc *scenario.Scenario, topo *testbed.Topology) []record.EndCheck {
	var out []record.EndCheck
	for _, ec := range sc.EndChecks {
		res := record.EndCheck{Name: ec.Name, Service: ec.Service}
		base, err := topo.TargetURL(ec.Service)
		if err == nil {
			err = callEndCheck(ctx, base+ec.Path, &res)
		}
		if err != nil {
			res.OK = false
			res.Error = err.Error()
		}
		out = append(out, res)
	}
	return out
}

func callEndCheck(ctx context.Context, url string, res *record.EndCheck) error {
	ctx, cancel := context.WithTimeout(ctx, endCheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("end check %s: %w", res.Name, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("end check %s: GET %s answered %s: %.200s", res.Name, url, resp.Status, body)
	}
	var answer struct {
		OK     *bool              `json:"ok"`
		Detail string             `json:"detail"`
		Values map[string]float64 `json:"values"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.OK == nil {
		return fmt.Errorf(`end check %s: GET %s: want JSON {"ok": bool, ...}, got %.200q`, res.Name, url, body)
	}
	res.OK, res.Detail, res.Values = *answer.OK, answer.Detail, answer.Values
	return nil
}
