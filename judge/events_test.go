package judge

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/record"
)

type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestEventReportSaysItsFailures: each event that did not reach where it
// goes is said on Log, a line each, and Done's error joins them; a
// report whose events all arrived says nothing.
func TestEventReportSaysItsFailures(t *testing.T) {
	ev := record.FaultEvent{Fault: "slow", Action: record.Applied}
	for _, tc := range []struct {
		name   string
		report func(*bytes.Buffer) *EventReport
		lines  []string
	}{
		{"all arrived", func(b *bytes.Buffer) *EventReport { return &EventReport{File: &bytes.Buffer{}, Log: b} }, nil},
		{"events file broken", func(b *bytes.Buffer) *EventReport { return &EventReport{File: brokenWriter{}, Log: b} },
			[]string{"chaosrun fault apply: reporting: events file: disk full", "chaosrun fault apply: reporting: events file: disk full"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			rep := tc.report(&log)
			rep.Emit(context.Background(), ev)
			rep.Emit(context.Background(), ev)
			err := rep.Done(context.Background(), 0)
			got := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
			if len(tc.lines) == 0 {
				if err != nil || log.Len() > 0 {
					t.Errorf("err %v, log %q: want neither", err, log.String())
				}
				return
			}
			if err == nil || strings.Join(got, "|") != strings.Join(tc.lines, "|") {
				t.Errorf("err %v, log %q: want %q", err, got, tc.lines)
			}
		})
	}
}
