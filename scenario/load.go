package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Options are the checks that other packages know how to make; a nil hook
// skips its check.
type Options struct {
	// FaultKind checks a fault kind and its attributes.
	FaultKind func(kind string, attrs map[string]float64) error
	// Check checks one assertion check expression.
	Check func(expr string) error
	// Metric checks an assertion's metric selector.
	Metric func(selector string) error
	// LiveMetric checks that a metric can be judged while load runs (an
	// abortOnFail check's).
	LiveMetric func(selector string) error
	// Targets are the built-in target names allowed in run:; nil accepts
	// any non-empty name.
	Targets []string
	// Emits checks that the scenario's workload can emit what a (well
	// formed) assertion metric selects; nil checks nothing.
	Emits func(s *Scenario, selector string) error
	// TargetFlags lists a built-in target's flags, the keys its config:
	// may take; nil (or a nil list) checks no key.
	TargetFlags func(target string) []string
	// HostKind reports whether a fault kind acts on a host (host:) rather
	// than an edge (edge:); nil treats the kinds named host_* as host kinds.
	HostKind func(kind string) bool
	// FaultStage is the stage a fault kind declares it needs on its edge
	// (StageHTTP for a kind that reads HTTP requests); nil puts every kind
	// on StageTCP and lets any kind have a match.
	FaultStage func(kind string) EdgeStage
	// Compose reads the services of the Compose files scenarioFile names
	// (compose:, merged in order; each must lie inside the scenario's
	// folder); nil refuses the key. Its errors, when they are Errors, keep
	// their positions in those files; others are placed at compose:.
	Compose func(scenarioFile string, names []string) ([]Named, error)
}

// Load reads, decodes and validates a scenario file.
func Load(path string, opts Options) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	data, err := ReadAll(path, f)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, opts)
}

// Parse decodes and validates a scenario; file names it in errors. On
// failure the error is an Errors listing every problem found. Input beyond
// the file bounds (MaxFileSize, nesting, values) is refused before it is
// parsed.
func Parse(file string, data []byte, opts Options) (*Scenario, error) {
	if e := scanText(file, data); e != nil {
		return nil, Errors{e}
	}
	s := &Scenario{File: file, meta: newMeta()}
	root, errs := parseYAML(file, data)
	if errs != nil {
		return nil, errs
	}
	d := &decoder{file: file, m: s.meta, budget: maxNodes}
	d.value(root, reflect.ValueOf(s).Elem(), "", false)
	if d.budget < 0 {
		// What was not decoded would only show as false "missing" errors.
		return nil, d.errs.sort()
	}
	s.Order = s.meta.order["services"]
	s.Workload.StreamOrder = s.meta.order["workload.streams"]
	for name, svc := range s.Services {
		if svc == nil {
			s.Services[name] = &Service{}
		}
	}
	d.errs = append(d.errs, importCompose(s, opts)...)
	if err := validate(s, opts, d.errs); err != nil {
		return nil, err
	}
	return s, nil
}

// yamlLine matches the position yaml.v3 puts in its syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlAnchor matches yaml.v3's error for an alias to no anchor.
var yamlAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// parseYAML parses exactly one YAML document into its root node.
func parseYAML(file string, data []byte) (*yaml.Node, Errors) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: file, Line: 1, Col: 1, Msg: "the file is empty"}}
		}
		return nil, Errors{yamlError(file, data, err)}
	}
	if len(doc.Content) == 0 {
		return nil, Errors{{File: file, Line: 1, Col: 1, Msg: "the file is empty"}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errors{{File: file, Line: extra.Line, Col: extra.Column, Msg: "a scenario file holds one YAML document; found another"}}
	} else if !errors.Is(err, io.EOF) {
		return nil, Errors{yamlError(file, data, err)}
	}
	return doc.Content[0], nil
}

// yamlParserProblems are the messages of yaml.v3's parser (not scanner)
// errors, whose reported line is 0-based.
var yamlParserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected node content",
	"did not find expected <document start>",
	"did not find expected <stream-start>",
	"found duplicate %YAML directive",
	"found duplicate %TAG directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// yamlError turns a yaml.v3 syntax error into an Error with its line (and
// column, for a tab).
func yamlError(file string, data []byte, err error) *Error {
	msg := err.Error()
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		problem := trimYAMLPrefix(msg)
		e := &Error{File: file, Msg: "invalid YAML: " + problem}
		if slices.Contains(yamlParserProblems, problem) {
			e.Line = 1 // the parser leaves out line 0 (the first)
		}
		if a := yamlAnchor.FindStringSubmatch(problem); a != nil {
			if i := bytes.Index(data, []byte("*"+a[1])); i >= 0 {
				e.Line = bytes.Count(data[:i], []byte("\n")) + 1
				e.Col = i - bytes.LastIndexByte(data[:i], '\n')
			}
		}
		return e
	}
	line, _ := strconv.Atoi(m[1])
	problem := m[2]
	if slices.Contains(yamlParserProblems, problem) {
		line++
	}
	e := &Error{File: file, Line: line, Msg: "invalid YAML: " + problem}
	lines := bytes.Split(data, []byte("\n"))
	if line >= 1 && line <= len(lines) {
		if col := bytes.IndexByte(lines[line-1], '\t'); col >= 0 && isIndent(lines[line-1], col) {
			e.Col = col + 1
			e.Msg += " (a tab: indent with spaces)"
		}
	}
	return e
}

// isIndent reports whether position col of line is in its leading blanks.
func isIndent(line []byte, col int) bool {
	for _, c := range line[:col] {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

func trimYAMLPrefix(msg string) string {
	if len(msg) > 6 && msg[:6] == "yaml: " {
		return msg[6:]
	}
	return msg
}
