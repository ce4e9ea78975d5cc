package judge

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/assertions"
	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

// TestFromFilesIsTheRecordsVerdicts: two shards' files, merged, give the
// verdicts assertions.Evaluate gives over the windows merged directly,
// with the timeline from a run record or from an events file.
func TestFromFilesIsTheRecordsVerdicts(t *testing.T) {
	sc := testScenario()
	dir := t.TempDir()
	a := writeResults(t, dir, "0/2", shardWindows(t, 0, 2), true)
	b := writeResults(t, dir, "1/2", shardWindows(t, 1, 2), true)
	merged, err := record.MergeWindows(shardWindows(t, 0, 2), shardWindows(t, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	ref := &record.Run{Start: t0.Add(300e6), End: t0.Add(10e9), Windows: merged, Faults: events()}
	want := assertions.Evaluate(ref, sc.Assertions)

	recFile, err := json.Marshal(&record.Run{SchemaVersion: record.SchemaVersion, Start: ref.Start, End: ref.End, Faults: events()})
	if err != nil {
		t.Fatal(err)
	}
	var lines []byte
	for _, ev := range events() {
		l, _ := json.Marshal(ev)
		lines = append(append(lines, l...), '\n')
	}
	for _, tc := range []struct {
		name string
		tl   []byte
	}{{"run record", recFile}, {"events file", lines}} {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := ReadTimeline("timeline", tc.tl)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := FromFiles(context.Background(), sc, FileOptions{Files: []string{a, b}, Timeline: &tl})
			if err != nil {
				t.Fatal(err)
			}
			got := rec.Verdicts
			if tc.name == "events file" {
				// load from the first window's start: the window at t0
				// counts too, as it does not in the record.
				ref2 := *ref
				ref2.Start = t0
				want = assertions.Evaluate(&ref2, sc.Assertions)
			}
			if len(got) != len(want) {
				t.Fatalf("verdicts %v, want %d", verdictsOf(rec), len(want))
			}
			for i := range want {
				if got[i].Pass != want[i].Pass || got[i].Observed != want[i].Observed || got[i].Samples != want[i].Samples {
					t.Errorf("verdict %d: %+v, want %+v", i, got[i], want[i])
				}
			}
			if s := strings.Join(verdictsOf(rec), "; "); !strings.Contains(s, "fast p(99) < 100ms: FAIL") || !strings.Contains(s, "no-errors rate < 0.01: pass") || !strings.Contains(s, "all-there count == 200: pass") {
				t.Errorf("verdicts %s", s)
			}
		})
	}
}

// TestFromFilesRefusesBadInput: a file cut in the middle, one without its
// end, a malformed line or no results file at all is an InputError that
// names the file and line; --partial judges what is there, marked
// incomplete.
func TestFromFilesRefusesBadInput(t *testing.T) {
	sc := testScenario()
	dir := t.TempDir()
	good := writeResults(t, dir, "0/1", shardWindows(t, 0, 1), true)
	body, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cutAt := len(body) / 2
	cut := writeFile(t, filepath.Join(dir, "cut.jsonl"), body[:cutAt])
	unended := writeResults(t, t.TempDir(), "0/1", shardWindows(t, 0, 1), false)
	lines := strings.SplitAfter(string(body), "\n")
	lines[3] = `{"type":"window","start":"2026-01-01T12:00:02Z","series":[{"metric":"x","kind":"histogram","count":1}]}` + "\n"
	badKind := writeFile(t, filepath.Join(dir, "kind.jsonl"), []byte(strings.Join(lines, "")))
	notResults := writeFile(t, filepath.Join(dir, "run.json"), []byte(`{"schema_version":1}`))
	tests := []struct {
		name, file string
		want       []string
	}{
		{"cut in the middle", cut, []string{"cut.jsonl:", "not a JSON message", "no end marker"}},
		{"no end marker", unended, []string{"no end marker", "cut short"}},
		{"unknown kind", badKind, []string{"kind.jsonl:4:", `kind "histogram"; allowed: trend, counter, rate, gauge`}},
		{"not a results file", notResults, []string{"is not a results file", "hello"}},
		{"empty", writeFile(t, filepath.Join(dir, "empty.jsonl"), nil), []string{"is not a results file", "no hello"}},
		{"a directory", dir, []string{"is a directory, not a results file"}},
		{"/dev/urandom", "/dev/urandom", []string{"is a device, not a results file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromFiles(context.Background(), sc, FileOptions{Files: []string{tc.file}})
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want an InputError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if !strings.Contains(tc.name, "end") && !strings.Contains(tc.name, "cut") {
				return // no results file at all: nothing partial to judge
			}
			rec, err := FromFiles(context.Background(), sc, FileOptions{Files: []string{tc.file}, Partial: true})
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Close()
			n := 0
			if err := rec.EachWindow(func(record.Window) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
			if !rec.Incomplete || len(rec.Problems) == 0 || n == 0 {
				t.Errorf("--partial: incomplete %v, problems %v, %d windows", rec.Incomplete, rec.Problems, n)
			}
		})
	}
}

// TestFromFilesSaysWhatItCannotJudge: an end-check assertion over results
// files alone fails, and the record says why.
func TestFromFilesSaysWhatItCannotJudge(t *testing.T) {
	sc := testScenario()
	sc.Assertions = append(sc.Assertions, record0EndCheck())
	f := writeResults(t, t.TempDir(), "0/1", shardWindows(t, 0, 1), true)
	rec, err := FromFiles(context.Background(), sc, FileOptions{Files: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rec.Problems, func(p string) bool { return strings.Contains(p, "end checks, which results streams do not carry") }) {
		t.Errorf("problems %v", rec.Problems)
	}
	// Without a timeline, the fault was never applied: its windows fail.
	if rec.Verdicts[0].Pass || !strings.Contains(rec.Verdicts[0].Error, "never applied") || len(rec.NotApplied) != 1 {
		t.Errorf("verdict %+v, not applied %+v", rec.Verdicts[0], rec.NotApplied)
	}
}

// TestFromFilesSpillsToDisk: two shards' files are judged from window logs
// on disk (the record reads its windows from there, none held in it), and
// where no log can be made, from memory, with the same verdicts and a
// problem that says so.
func TestFromFilesSpillsToDisk(t *testing.T) {
	sc := testScenario()
	dir := t.TempDir()
	files := []string{writeResults(t, dir, "0/2", shardWindows(t, 0, 2), true), writeResults(t, dir, "1/2", shardWindows(t, 1, 2), true)}
	var verdicts [][]string
	for _, tc := range []struct {
		name, spill string
		logs        int
		note        string
	}{
		{"logs on disk", t.TempDir(), 2, ""},
		{"no log can be made", filepath.Join(dir, "missing"), 0, "its windows are held in memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := FromFiles(context.Background(), sc, FileOptions{Files: files, Timeline: &Timeline{Faults: events()}, SpillDir: tc.spill})
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Close()
			src, _ := rec.Source.(stream.Spilled)
			if len(rec.Windows) != 0 || len(src.Logs) != tc.logs {
				t.Errorf("%d windows in the record, %d logs; want none and %d", len(rec.Windows), len(src.Logs), tc.logs)
			}
			if !rec.Start.Equal(t0) || !rec.End.Equal(t0.Add(10*time.Second)) {
				t.Errorf("load %s to %s, want %s to %s", rec.Start, rec.End, t0, t0.Add(10*time.Second))
			}
			noted := slices.ContainsFunc(rec.Problems, func(p string) bool { return tc.note != "" && strings.Contains(p, tc.note) })
			if noted != (tc.note != "") || rec.Incomplete {
				t.Errorf("problems %q (incomplete %v), want a note %q", rec.Problems, rec.Incomplete, tc.note)
			}
			verdicts = append(verdicts, verdictsOf(rec))
		})
	}
	if len(verdicts) == 2 && !slices.Equal(verdicts[0], verdicts[1]) {
		t.Errorf("verdicts from disk %v, from memory %v", verdicts[0], verdicts[1])
	}
}

func record0EndCheck() scenario.Assertion {
	return scenario.Assertion{Name: "money", Metric: "end_check_failures{check:money}", Checks: []scenario.Check{{Threshold: "count == 0"}}}
}

// TestReadTimelineFile: a timeline file is read as ReadTimeline reads its
// bytes, leading blank lines kept for the line numbers; a file that does
// not open a JSON object is refused at its first byte, at its line and
// column; one larger than the cap, or /dev/zero, is refused at once.
func TestReadTimelineFile(t *testing.T) {
	dir := t.TempDir()
	ev, _ := json.Marshal(events()[0])
	for name, body := range map[string]string{
		"events.jsonl": "\n\n" + string(ev) + "\n{\"fault\":\"\"}\n",
		"binary":       "\n  \x00\x01",
		"empty":        "\n \n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wd := workdir.FS{FS: os.DirFS("/"), Dir: dir}
	for _, tc := range []struct{ file, want string }{
		{"events.jsonl", "events.jsonl:4: fault event without a fault name"},
		{"binary", `binary:2:3: byte '\x00': not a fault timeline; want a run record (run.json) or fault events, one JSON object a line`},
		{"empty", "empty: empty; want a run record"},
		{"missing", "open missing: no such file or directory"},
		{"/dev/zero", `/dev/zero:1:1: byte '\x00': not a fault timeline`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, err := ReadTimelineFile(context.Background(), wd, tc.file)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestFromFilesJudgesAsTheRunDid: with a run record's timeline the judge
// carries what the run knew of its load — the script's thresholds, k6's
// own exit 99, an abort — and gives the run's verdicts: the script's
// thresholds judged (source script), k6's exit 99 failing its threshold,
// and an aborted run not judged as load that ended early.
func TestFromFilesJudgesAsTheRunDid(t *testing.T) {
	sc := testScenario()
	files := []string{writeResults(t, t.TempDir(), "0/1", shardWindows(t, 0, 1), true)}
	thresholds := []record.ScriptCheck{
		{Assertion: "threshold http_req_duration", Metric: "http_req_duration", Window: "all", Check: "p(95)<1000"},
		{Assertion: "threshold http_req_duration", Metric: "http_req_duration", Window: "all", Check: "max<100"},
	}
	tests := []struct {
		name string
		run  record.Run
		want []string // verdicts after the scenario's three
	}{
		{"script thresholds", record.Run{End: t0.Add(10 * time.Second), ScriptChecks: thresholds},
			[]string{"threshold http_req_duration p(95)<1000: pass", "threshold http_req_duration max<100: FAIL"}},
		{"k6 exit 99 over the same samples", record.Run{End: t0.Add(10 * time.Second), ScriptChecks: thresholds[:1],
			LoadParts: []record.LoadPart{{Name: "k6", ExitCode: 99, ThresholdsCrossed: true, Crossed: []record.Threshold{{Key: "http_req_duration", Expr: "p(95)<1000"}}}}},
			[]string{"threshold http_req_duration p(95)<1000: FAIL"}},
		{"aborted", record.Run{End: t0.Add(5 * time.Second), Aborted: `abortOnFail: fast: "p(99) < 100ms" failed after 5s of load`}, nil},
		{"ended early", record.Run{End: t0.Add(5 * time.Second)}, []string{"load ran for its planned duration: FAIL"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := tc.run
			run.SchemaVersion, run.Start, run.Faults = record.SchemaVersion, t0, events()
			b, err := json.Marshal(&run)
			if err != nil {
				t.Fatal(err)
			}
			tl, err := ReadTimeline("run.json", b)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := FromFiles(context.Background(), sc, FileOptions{Files: files, Timeline: &tl})
			if err != nil {
				t.Fatal(err)
			}
			got := verdictsOf(rec)
			if len(got) < 3 || !slices.Equal(got[3:], tc.want) {
				t.Errorf("verdicts %q, want the scenario's three and %q", got, tc.want)
			}
			if rec.Aborted != run.Aborted {
				t.Errorf("aborted %q, want %q", rec.Aborted, run.Aborted)
			}
			for _, v := range rec.Verdicts[3:] {
				if strings.HasPrefix(v.Assertion, "threshold ") && v.Source != record.SourceScript {
					t.Errorf("verdict %s: source %q, want script", v.Assertion, v.Source)
				}
			}
		})
	}
}
