package assertions

import (
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

func TestParseMetric(t *testing.T) {
	tests := []struct {
		in   string
		want string // canonical String()
	}{
		{"http_req_duration", "http_req_duration"},
		{"http_req_duration{}", "http_req_duration"},
		{"http_req_duration{api:TransactCheck}", "http_req_duration{api:TransactCheck}"},
		{" http_req_duration { api : TransactCheck , status:200 } ", "http_req_duration{api:TransactCheck,status:200}"},
		{`m{name:"a,b}"}`, `m{name:"a,b}"}`},
		{`m{name:"say \"hi\""}`, `m{name:"say \"hi\""}`},
		{"m{status:!200}", "m{status:!200}"},
		{`m{url:http://x/y?q=1}`, `m{url:"http://x/y?q=1"}`},
		{"m{expected_response:true,scenario.name:cash-1}", "m{expected_response:true,scenario.name:cash-1}"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			m, err := ParseMetric(tc.in)
			if err != nil {
				t.Fatalf("ParseMetric(%q): %v", tc.in, err)
			}
			if got := m.String(); got != tc.want {
				t.Errorf("ParseMetric(%q).String() = %s, want %s", tc.in, got, tc.want)
			}
			if again, err := ParseMetric(m.String()); err != nil || again.String() != m.String() {
				t.Errorf("canonical form %q does not round-trip: %v", m.String(), err)
			}
		})
	}
}

func TestParseMetricErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `column 1: expected a metric name (letters, digits, _), found the end`},
		{"9lives", `column 1: expected a metric name (letters, digits, _), found "9"`},
		{"m[x]", `column 2: expected "{" or the end, found "["`},
		{"m{api}", `column 6: expected ":" after tag "api", found "}"`},
		{"m{:x}", `column 3: expected a tag name, found ":"`},
		{"m{api:}", `column 7: expected a tag value (bare or "quoted"), found "}"`},
		{"m{api:x", `column 8: expected "," or "}", found the end`},
		{"m{api:x,}", `column 9: expected a tag name, found "}"`},
		{`m{api:"x}`, `column 7: expected a closing " for the value, found the end`},
		{"m{api:x} y", `column 10: expected the end of the selector, found "y"`},
		{"m{api:x,api:y}", `column 9: tag "api" is filtered twice`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseMetric(tc.in)
			if err == nil || err.Error() != tc.want {
				t.Errorf("ParseMetric(%q)\n got: %v\nwant: %s", tc.in, err, tc.want)
			}
			if ValidateMetric(tc.in) == nil {
				t.Errorf("ValidateMetric(%q) = nil", tc.in)
			}
		})
	}
}

func TestMetricMatches(t *testing.T) {
	s := record.Series{Metric: "http_req_duration", Tags: map[string]string{"api": "TransactCheck", "status": "200"}}
	tests := []struct {
		sel  string
		want bool
	}{
		{"http_req_duration", true},
		{"http_req_failed", false},
		{"http_req_duration{api:TransactCheck}", true},
		{"http_req_duration{api:TransactCash}", false},
		{"http_req_duration{api:TransactCheck,status:200}", true},
		{"http_req_duration{api:TransactCheck,status:500}", false},
		{"http_req_duration{tier:gold}", false},
		{"http_req_duration{status:!500}", true},
		{"http_req_duration{status:!200}", false},
		{"http_req_duration{tier:!gold}", true},
	}
	for _, tc := range tests {
		m, err := ParseMetric(tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Matches(s); got != tc.want {
			t.Errorf("%s matches %v = %v, want %v", tc.sel, s.Tags, got, tc.want)
		}
	}
}

func TestParseWindow(t *testing.T) {
	good := map[string]string{"": "whole", "whole": "whole", "before slow-vault": "before slow-vault",
		" during  x ": "during x", "after x": "after x", "before": "before"}
	for in, want := range good {
		w, err := ParseWindow(in)
		if err != nil || w.String() != want {
			t.Errorf("ParseWindow(%q) = %v, %v; want %s", in, w, err, want)
		}
	}
	bad := map[string]string{
		"while x":      `column 1: expected whole, all, before FAULT, during FAULT or after FAULT, found "while"`,
		"whole x":      `column 7: expected the end after whole, found "x"`,
		"during x y":   `column 10: expected the end after the fault name, found "y"`,
		"  between ab": `column 3: expected whole, all, before FAULT, during FAULT or after FAULT, found "between"`,
	}
	for in, want := range bad {
		if err := ValidateWindow(in); err == nil || err.Error() != want {
			t.Errorf("ParseWindow(%q)\n got: %v\nwant: %s", in, err, want)
		}
	}
}
