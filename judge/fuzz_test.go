package judge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

// FuzzReadTimeline: no input makes ReadTimeline panic; what it accepts
// holds only checked events (a name, a known action, an actual time),
// and a run record's timeline has a start and an end not before it.
func FuzzReadTimeline(f *testing.F) {
	rec, _ := json.Marshal(&record.Run{SchemaVersion: record.SchemaVersion, Start: t0, End: t0.Add(1e9), Faults: events()})
	f.Add(rec)
	var lines []string
	for _, ev := range events() {
		b, _ := json.Marshal(ev)
		lines = append(lines, string(b))
	}
	f.Add([]byte(strings.Join(lines, "\n")))
	f.Add([]byte(`{"schema_version":1,"start":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"fault":"x","action":"applied","actual":"2026-01-01T00:00:00Z"}` + "\n{"))
	f.Add([]byte(`{"fault":"x","action":"applied","actual":"2026-01-01T00:00:00Z","extra":1}`))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tl, err := ReadTimeline("f", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		for _, ev := range tl.Faults {
			if checkEvent(ev) != nil {
				t.Errorf("accepted a bad event %+v", ev)
			}
		}
		if tl.FromRecord && (tl.Start.IsZero() || tl.End.Before(tl.Start)) {
			t.Errorf("accepted a record timeline %v to %v", tl.Start, tl.End)
		}
	})
}
