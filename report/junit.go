package report

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/record"
)

// JUnit XML as CI tools read it (Jenkins' junit schema, which GitHub, GitLab
// and the test-report actions follow): one testsuite per scenario, one
// testcase per assertion check.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	File       string          `xml:"file,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit renders runs as JUnit XML: a suite per scenario, a test case per
// assertion check named "assertion: check". A breached check is a failure
// whose message gives the observed value, the bound and the window; a check
// that could not be evaluated is an error; an incomplete run adds an
// erroring "run" case with its problems, an aborted one a failing "run"
// case with the reason, and each fault not applied a skipped case.
func JUnit(runs []*record.Run) ([]byte, error) {
	all := junitSuites{Name: "chaosrun"}
	var total float64
	for _, r := range runs {
		s := junitSuite{Name: r.Scenario, File: r.File, Time: secs(r.Timings.Load)}
		if !r.Start.IsZero() {
			s.Timestamp = r.Start.UTC().Format("2006-01-02T15:04:05")
		}
		total += float64(r.Timings.Load) / 1e9
		s.Properties = append(s.Properties, junitProperty{"seed", fmt.Sprint(r.Seed)}, junitProperty{"testbed", r.Testbed})
		for _, k := range sortedKeys(r.Versions) {
			s.Properties = append(s.Properties, junitProperty{"version." + k, r.Versions[k]})
		}
		if len(r.Overrides) > 0 {
			s.Properties = append(s.Properties, junitProperty{"overrides", strings.Join(r.Overrides, " ")})
		}
		for _, v := range r.Verdicts {
			c := junitCase{Name: v.Assertion + ": " + v.Check, Classname: r.Scenario + "." + v.Assertion,
				Time: secs(v.To - v.From), SystemOut: evidence(v)}
			switch {
			case v.NotApplicable != "":
				c.Skipped = &junitProblem{Type: "not applicable", Message: v.NotApplicable}
				s.Skipped++
			case v.Error != "":
				c.Error = &junitProblem{Type: "not evaluated", Message: v.Error, Text: evidence(v)}
				s.Errors++
			case !v.Pass:
				c.Failure = &junitProblem{Type: "breach", Message: evidence(v), Text: evidence(v)}
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
		}
		for _, na := range r.NotApplied {
			s.Cases = append(s.Cases, junitCase{Name: "fault " + na.Fault, Classname: r.Scenario, Time: "0.000",
				Skipped: &junitProblem{Type: "not applied", Message: notApplied(na)}})
			s.Skipped++
		}
		if r.Aborted != "" {
			s.Cases = append(s.Cases, junitCase{Name: "run", Classname: r.Scenario, Time: secs(r.Timings.Load),
				Failure: &junitProblem{Type: "aborted", Message: r.Aborted, Text: r.Aborted}})
			s.Failures++
		}
		if r.Incomplete || len(r.Verdicts) == 0 {
			msg := "run incomplete"
			if len(r.Verdicts) == 0 {
				msg = "no checks were evaluated"
			}
			s.Cases = append(s.Cases, junitCase{Name: "run", Classname: r.Scenario, Time: secs(r.Timings.Load),
				Error: &junitProblem{Type: "incomplete", Message: msg, Text: strings.Join(r.Problems, "\n")}})
			s.Errors++
		}
		s.Tests = len(s.Cases)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		all.Suites = append(all.Suites, s)
	}
	all.Time = fmt.Sprintf("%.3f", total)
	b, err := xml.MarshalIndent(all, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report: junit: %w", err)
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// evidence is a check's outcome in one line: observed, bound, window.
func evidence(v record.Verdict) string {
	return fmt.Sprintf("observed %s, bound %s (check %s) over %s [+%s, +%s), %d samples",
		observed(v), bound(v), v.Check, v.Metric+" "+v.Window, ms(v.From), ms(v.To), v.Samples)
}

// ms writes an offset rounded to the millisecond.
func ms(d record.Duration) string { return time.Duration(d).Round(time.Millisecond).String() }

func secs(d record.Duration) string { return fmt.Sprintf("%.3f", float64(d)/1e9) }

// WriteJUnit writes JUnit(runs) to path.
func WriteJUnit(path string, runs ...*record.Run) error {
	b, err := JUnit(runs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return writeFile(path, b)
}
