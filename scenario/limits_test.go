package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestTextBounds: input YAML would reject without a position, or that would
// cost too much to parse, is refused at its line and column.
func TestTextBounds(t *testing.T) {
	head := "version: 1\nname: x\n"
	flowList := func(n int) string { return head + "allow_targets: [" + strings.Repeat("a,", n) + "a]\n" }
	blockList := func(n int) string { return head + "allow_targets:\n" + strings.Repeat("-\n", n) }
	tests := []struct {
		name, in, want string
	}{
		{"invalid UTF-8", head + "description: caf\xe9\n", "x.yaml:3:17: the file is not UTF-8 text"},
		{"a control character", head + "description: a\x01b\n", "x.yaml:3:15: character U+0001 is not allowed"},
		{"NUL", "\x00", "x.yaml:1:1: character U+0000 is not allowed"},
		{"DEL", head + "\x7f", "x.yaml:3:1: character U+007F"},
		{"C1 control", head + "description: \u0081\n", "x.yaml:3:14: character U+0081"},
		{"flow nesting", head + "description: " + strings.Repeat("[", 100) + "\n", "x.yaml:3:77: collections nest more than 64 levels"},
		{"block nesting", head + "description:\n" + strings.Repeat("- ", 100) + "x\n", "x.yaml:4:127: collections nest more than 64 levels"},
		{"indented nesting", head + nestedMaps(80), "x.yaml:67:65: collections nest more than 64 levels"},
		{"a long flow list", flowList(maxNodes), "x.yaml:3:200004: the file holds more than 100000 values"},
		{"a long block list", blockList(maxNodes), "x.yaml:99998:1: the file holds more than 100000 values"},
		{"too large", head + "description: " + strings.Repeat("x", MaxFileSize), "x.yaml:3:262126: the file goes on past 256 KiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.in), testOptions)
			var errs Errors
			if !errors.As(err, &errs) || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want) {
				t.Fatalf("got %v\nwant one error starting %q", err, tc.want)
			}
		})
	}
}

func nestedMaps(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	return b.String()
}

// TestTextBoundsAllowWhatScenariosHold: the scan does not count text in
// quotes, comments and block scalars as structure.
func TestTextBoundsAllowWhatScenariosHold(t *testing.T) {
	deep := strings.Repeat("[", 100)
	in := "version: 1\nname: x # " + deep + "\ndescription: |\n  " + deep + "\n  - - - - \n" +
		"seed: 1\nallow_targets: [\"" + deep + "\", '" + deep + "''s']\n"
	if e := scanText("x.yaml", []byte(in)); e != nil {
		t.Fatalf("refused: %v", e)
	}
	many := "allow_targets: \"" + strings.Repeat("a,", maxNodes) + "\"\n"
	if e := scanText("x.yaml", []byte(many)); e != nil {
		t.Fatalf("a long quoted string refused: %v", e)
	}
}

// TestReadAllStopsAtTheBound: an endless input is read only to the bound.
func TestReadAllStopsAtTheBound(t *testing.T) {
	r := &countingReader{}
	t0 := time.Now()
	_, err := ReadAll("/dev/zero", r)
	if err == nil || !strings.HasPrefix(err.Error(), "/dev/zero:1:262145: the file goes on past 256 KiB") {
		t.Fatalf("err = %v", err)
	}
	if r.n > MaxFileSize+64<<10 || time.Since(t0) > time.Second {
		t.Errorf("read %d bytes in %s", r.n, time.Since(t0))
	}
	data, err := ReadAll("ok.yaml", bytes.NewReader([]byte("a: 1\n")))
	if err != nil || string(data) != "a: 1\n" {
		t.Errorf("ReadAll = %q, %v", data, err)
	}
}

// countingReader is an endless stream of zeros that counts what was read.
type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	clear(p)
	c.n += len(p)
	return len(p), nil
}

var _ io.Reader = (*countingReader)(nil)

// TestAliasBombStopsAlone: aliases that expand past the value budget give
// that one error, not false "missing" ones for what was never decoded.
func TestAliasBombStopsAlone(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nname: x\nservices: {a: {run: ledger}, b: {run: bankservice, depends_on: [a]}}\n")
	b.WriteString("faults: [&f {name: f, kind: latency, edge: b->a, start: 1s, duration: 1s, attributes: {")
	for i := range 1000 {
		fmt.Fprintf(&b, "k%d: 1, ", i)
	}
	b.WriteString("k: 1}}" + strings.Repeat(", *f", 1000) + "]\n")
	b.WriteString("workload: {script: bank.js, duration: 10s, targets: [b]}\n")
	_, err := Parse("x.yaml", []byte(b.String()), testOptions)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 || !strings.Contains(errs[0].Error(), "expands to more than") {
		t.Fatalf("got %d errors: %.500v", len(errs), err)
	}
}
