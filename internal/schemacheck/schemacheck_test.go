package schemacheck

import (
	"strings"
	"testing"
)

const doc = `{"$schema": "https://json-schema.org/draft/2020-12/schema",
 "type": "object", "required": ["at"], "additionalProperties": false,
 "properties": {"at": {"type": "string", "format": "date-time"}}}`

func TestValidate(t *testing.T) {
	s, err := Compile([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"valid", `{"at": "2026-11-22T07:53:59.109033523Z"}`, ""},
		{"missing", `{}`, "missing property 'at'"},
		{"extra", `{"at": "2026-11-22T07:53:59Z", "x": 1}`, "additional properties 'x' not allowed"},
		{"format asserted", `{"at": "yesterday"}`, "is not valid date-time"},
		{"not JSON", `{`, "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Validate([]byte(tc.doc))
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := Compile([]byte(`{"type": 3}`)); err == nil {
		t.Error("compiled a schema whose type is a number")
	}
	err = s.ValidateEdited([]byte(`{"at": "2026-11-22T07:53:59Z"}`), func(m map[string]any) { delete(m, "at") })
	if err == nil || !strings.Contains(err.Error(), "missing property 'at'") {
		t.Errorf("edited: got %v", err)
	}
}
