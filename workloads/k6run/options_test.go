package k6run

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		own     bool
		planned time.Duration
		known   bool
	}{
		{"no options", `{"duration":null,"iterations":null,"stages":null,"scenarios":null,"thresholds":null}`, false, 0, false},
		{"duration", `{"duration":"45s"}`, true, 45 * time.Second, true},
		{"duration and iterations", `{"duration":"45s","iterations":10}`, true, 0, false},
		{"iterations", `{"iterations":1}`, true, 0, false},
		{"stages", `{"stages":[{"duration":"3s","target":5},{"duration":"1m","target":0}]}`, true, 63 * time.Second, true},
		{"scenarios", `{"scenarios":{"a":{"executor":"constant-arrival-rate","duration":"10s","rate":5},
			"b":{"executor":"ramping-vus","startTime":"5s","stages":[{"duration":"10s","target":3}]}}}`, true, 15 * time.Second, true},
		{"scenario of iterations", `{"scenarios":{"a":{"executor":"shared-iterations","iterations":100},"b":{"executor":"constant-vus","duration":"5s"}}}`, true, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseOptions([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			d, ok := o.Planned()
			if o.OwnSchedule() != tc.own || d != tc.planned || ok != tc.known {
				t.Errorf("own %v, planned %s %v; want %v, %s %v", o.OwnSchedule(), d, ok, tc.own, tc.planned, tc.known)
			}
		})
	}
}

func TestParseThresholds(t *testing.T) {
	o, err := ParseOptions([]byte(`{"thresholds":{"http_req_failed":["rate<0.01"],
		"http_req_duration":["p(95)<500",{"threshold":"p(99)<1000","abortOnFail":true,"delayAbortEval":"10s"},{"threshold":"max<2000"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Threshold{
		{Key: "http_req_duration", Expr: "p(95)<500"},
		{Key: "http_req_duration", Expr: "p(99)<1000", AbortOnFail: true, DelayAbortEval: 10 * time.Second},
		{Key: "http_req_duration", Expr: "max<2000"},
		{Key: "http_req_failed", Expr: "rate<0.01"},
	}
	if !reflect.DeepEqual(o.Thresholds, want) {
		t.Errorf("thresholds\n%+v\nwant\n%+v", o.Thresholds, want)
	}
	for _, bad := range []string{`{"thresholds":{"x":[3]}}`, `{"thresholds":{"x":[{"threshold":"a<1","delayAbortEval":"soon"}]}}`, `{"stages":3}`, `not json`} {
		if _, err := ParseOptions([]byte(bad)); err == nil {
			t.Errorf("ParseOptions(%s): no error", bad)
		}
	}
}

// TestInspect reads real scripts' options with the real k6: the script's
// environment is given, and a broken script's error is k6's own.
func TestInspect(t *testing.T) {
	bin := realK6(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.js")
	os.WriteFile(good, []byte(`export const options = {
  stages: [{ duration: __ENV.RAMP, target: 2 }],
  thresholds: { 'http_req_duration{type:API}': [{ threshold: 'p(99)<300', abortOnFail: true, delayAbortEval: '5s' }] },
};
export default function () {}
`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o, err := Inspect(ctx, bin, good, map[string]string{"RAMP": "7s"})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := o.Planned(); !ok || d != 7*time.Second {
		t.Errorf("planned %s %v, want 7s from the environment", d, ok)
	}
	want := []Threshold{{Key: "http_req_duration{type:API}", Expr: "p(99)<300", AbortOnFail: true, DelayAbortEval: 5 * time.Second}}
	if !reflect.DeepEqual(o.Thresholds, want) {
		t.Errorf("thresholds %+v", o.Thresholds)
	}
	bad := filepath.Join(dir, "bad.js")
	os.WriteFile(bad, []byte("export default function ( {\n"), 0o644)
	if _, err := Inspect(ctx, bin, bad, nil); err == nil || !strings.Contains(err.Error(), "k6 inspect "+bad) || !strings.Contains(err.Error(), "bad.js") {
		t.Errorf("broken script: %v", err)
	}
}

func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{`{"stages":[{"duration":"3s"}]}`, `{"scenarios":{"a":{"startTime":"1s","duration":"2s"}}}`,
		`{"thresholds":{"x":["p(95)<1",{"threshold":"a<1","abortOnFail":true,"delayAbortEval":"1s"}]}}`, `{}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseOptions(b)
		if err != nil {
			return
		}
		if d, ok := o.Planned(); ok && d < 0 && !strings.Contains(string(b), "-") {
			t.Fatalf("negative plan %s from %q", d, b)
		}
		for _, th := range o.Thresholds {
			if th.Key == "" && !strings.Contains(string(b), `""`) {
				t.Fatalf("threshold without a key from %q", b)
			}
		}
	})
}
