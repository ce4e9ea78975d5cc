package scenario

import "testing"

func TestExpand(t *testing.T) {
	vars := TemplateVars{Port: 8080, Instance: "app.1", Deps: map[string][]string{
		"redis": {"toxiproxy:20000"}, "ledger": {"toxiproxy:20001", "toxiproxy:20002"}}}
	cases := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"--port={port}", "--port=8080", ""},
		{"{instance}:{port}", "app.1:8080", ""},
		{"redis://{dep.redis}/0", "redis://toxiproxy:20000/0", ""},
		{"{dep.ledger}", "toxiproxy:20001,toxiproxy:20002", ""},
		{"{{port}", "{port}", ""},
		{"{{{port}}", "{8080}", ""},
		{`{"a": 1}`, `{"a": 1}`, ""},
		{"{ port }", "{ port }", ""},
		{"{port", "{port", ""},
		{"{}", "{}", ""},
		{"trailing {", "trailing {", ""},
		{"{prot}", "", "unknown template {prot}"},
		{"{dep.vault}", "", "{dep.vault}: no such dependency"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Expand(tc.in, vars)
			switch {
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Fatalf("Expand(%q) error = %v, want %q", tc.in, err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatalf("Expand(%q): %v", tc.in, err)
			case tc.err == "" && got != tc.want:
				t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestEscapeTemplate(t *testing.T) {
	for _, s := range []string{"plain", "{port}", "{{", `{"a": {"b": 1}}`, "{dep.x}}"} {
		got, err := Expand(EscapeTemplate(s), TemplateVars{})
		if err != nil || got != s {
			t.Errorf("Expand(EscapeTemplate(%q)) = %q, %v; want it back", s, got, err)
		}
	}
}
