package k6run

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// CrossedThresholds reads the thresholds k6 found crossed from the
// summary it wrote with --summary-export: per metric key, each
// expression maps to true when it failed. They come in key order.
func CrossedThresholds(path string) ([]Threshold, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sum struct {
		Metrics map[string]struct {
			Thresholds map[string]bool `json:"thresholds"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		return nil, fmt.Errorf("k6 summary %s: %w", path, err)
	}
	var out []Threshold
	for key, m := range sum.Metrics {
		for expr, failed := range m.Thresholds {
			if failed {
				out = append(out, Threshold{Key: key, Expr: expr})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Expr < out[j].Expr
	})
	return out, nil
}
