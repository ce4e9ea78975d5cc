package scenarioload

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/scenarios"
)

// TestEmitsCatchesTypos: an assertion over a metric the native workload
// never emits, or a tag value no stream sets, is an error at its line;
// what the workload can emit (its own metrics, templated tags, the
// harness's metrics, scrape:) validates. Every catalog scenario loads.
func TestEmitsCatchesTypos(t *testing.T) {
	const base = `version: 1
name: typo
services:
  api: {external: 127.0.0.1:8080}
workload:
  engine: native
  duration: 10s
  streams:
    list:
      target: api
      path: /items
      tags: {api: ListItems}
      arrival: {rate: 5}
      metrics: [{name: fast_answers, kind: rate, when: {status: [200], within: 100ms}}]
    get:
      target: api
      path: /items/{id}
      tags: {api: GetItem, key_class: "{id.class}"}
      arrival: {rate: 5}
      keys: {id: {kind: uniform, n: 10}}
assertions:
  - name: a
    metric: %s
    checks: ["count >= 0"]
`
	for _, tc := range []struct{ metric, err string }{
		{"http_req_faild{api:ListItems}", `the native engine emits no metric "http_req_faild"; did you mean "http_req_failed"?`},
		{"http_req_duration{api:ListItem}", `no stream tags api:ListItem; did you mean "ListItems"?`},
		{"http_req_duration{scenario:lists}", `no stream tags scenario:lists; did you mean "list"?`},
		{"http_req_duration{api:ListItems}", ""},
		{"http_req_duration{api:!Nope}", ""},
		{"http_req_duration{key_class:hot}", ""}, // templated: any value may come
		{"http_req_duration{status:503}", ""},
		{"fast_answers{api:ListItems}", ""},
		{"scrape:up{service:api}", ""},
		{"end_check_failures{check:x}", ""},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			dir := t.TempDir()
			body := strings.Replace(base, "%s", tc.metric, 1)
			if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loader(t, dir).Load(context.Background(), "s.yaml", nil)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "s.yaml:23:13: assertions[0].metric")):
				t.Errorf("error %v, want s.yaml:23:13 saying %q", err, tc.err)
			}
		})
	}
	for _, e := range scenarios.All() {
		if _, err := loader(t, t.TempDir()).Load(context.Background(), "catalog:"+e.Name, nil); err != nil {
			t.Errorf("catalog:%s: %v", e.Name, err)
		}
	}
}
