package compose

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
	"gopkg.in/yaml.v3"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
)

// source is one file of a project, parsed for positions.
type source struct {
	file string
	data []byte
	root *yaml.Node
	// services indexes services: by name: the key node and the value.
	services map[string][2]*yaml.Node
}

// sources are a project's files: the main ones (merged in order) first,
// then those extends: names; dir is the project's folder.
type sources struct {
	dir  string
	list []*source
	main int
}

// parse reads the file's single YAML document into nodes and indexes its
// services.
func (s *source) parse() error {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(s.data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return scenario.Errors{{File: s.file, Line: 1, Col: 1, Field: fileField, Msg: "the Compose file is empty"}}
		}
		return scenario.Errors{yamlError(s.file, s.data, err)}
	}
	if e := checkAliases(s.file, &doc); e != nil {
		return scenario.Errors{e}
	}
	if len(doc.Content) == 0 || deref(doc.Content[0]) == nil || deref(doc.Content[0]).Kind != yaml.MappingNode {
		return scenario.Errors{{File: s.file, Line: max(doc.Line, 1), Col: max(doc.Column, 1), Field: fileField, Msg: "a Compose file is a mapping with services:"}}
	}
	s.root = doc.Content[0]
	s.services = map[string][2]*yaml.Node{}
	if svcs := deref(valueOf(s.root, "services")); svcs != nil && svcs.Kind == yaml.MappingNode {
		for _, p := range mappingPairs(svcs, 0) {
			if _, ok := s.services[p[0].Value]; !ok {
				s.services[p[0].Value] = p
			}
		}
	}
	return nil
}

// keyNode is the key node of path in the file, nil when it has none.
func (s *source) keyNode(path ...string) *yaml.Node {
	if len(path) >= 2 && path[0] == "services" {
		p, ok := s.services[path[1]]
		if !ok {
			return nil
		}
		if len(path) == 2 {
			return p[0]
		}
		return keyNode(p[1], path[2:]...)
	}
	return keyNode(s.root, path...)
}

// first is the first file (and key node) that has path.
func (ss *sources) first(path ...string) (string, *yaml.Node) {
	for _, s := range ss.list {
		if n := s.keyNode(path...); n != nil {
			return s.file, n
		}
	}
	return "", nil
}

// last is the last main file that has path (the value that wins a
// merge), else the first file extends: names that has it.
func (ss *sources) last(path ...string) (string, *yaml.Node) {
	for i := ss.main - 1; i >= 0; i-- {
		if n := ss.list[i].keyNode(path...); n != nil {
			return ss.list[i].file, n
		}
	}
	for _, s := range ss.list[ss.main:] {
		if n := s.keyNode(path...); n != nil {
			return s.file, n
		}
	}
	return "", nil
}

// errAt is an error at the key of path (the last file that sets it),
// else at the nearest key above it that a file has, else at the top of
// the first file.
func (ss *sources) errAt(field, allowed, msg string, path ...string) *scenario.Error {
	e := &scenario.Error{File: ss.list[0].file, Line: 1, Col: 1, Field: field, Msg: msg, Allowed: allowed}
	for n := len(path); n > 0; n-- {
		if file, at := ss.last(path[:n]...); at != nil {
			e.File, e.Line, e.Col = file, at.Line, at.Column
			return e
		}
	}
	if at := ss.list[0].keyNode(fileField); at != nil {
		e.Line, e.Col = at.Line, at.Column
	}
	return e
}

// serviceOrder lists the project's services in the files' order.
func (ss *sources) serviceOrder(proj *types.Project) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss.list[:ss.main] {
		svcs := deref(valueOf(s.root, "services"))
		if svcs == nil || svcs.Kind != yaml.MappingNode {
			continue
		}
		for _, p := range mappingPairs(svcs, 0) {
			if _, ok := proj.Services[p[0].Value]; ok && !seen[p[0].Value] {
				seen[p[0].Value] = true
				out = append(out, p[0].Value)
			}
		}
	}
	var rest []string
	for n := range proj.Services {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// readExtends reads every file an extends: of the project names (and
// those they name), each of which must lie inside the project's folder
// and be a Compose file of at most MaxSize bytes.
func (ss *sources) readExtends(ctx context.Context) scenario.Errors {
	var errs scenario.Errors
	for i := 0; i < len(ss.list); i++ {
		s := ss.list[i]
		names := make([]string, 0, len(s.services))
		for name := range s.services {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			v := deref(valueOf(deref(valueOf(s.services[name][1], "extends")), "file"))
			if v == nil || v.Kind != yaml.ScalarNode || v.Value == "" {
				continue
			}
			e := ss.readExtend(ctx, s, name, v)
			if e != nil {
				errs = append(errs, e)
			}
		}
	}
	return errs
}

// extendsAllowed is what extends.file may name.
const extendsAllowed = "a Compose file inside the project's folder, named without ${VAR}"

// readExtend reads the file v (services.name.extends.file of s) names,
// once.
func (ss *sources) readExtend(ctx context.Context, s *source, name string, v *yaml.Node) *scenario.Error {
	field := "services." + name + ".extends.file"
	bad := func(format string, args ...any) *scenario.Error {
		return &scenario.Error{File: s.file, Line: v.Line, Col: v.Column, Field: field, Msg: fmt.Sprintf(format, args...), Allowed: extendsAllowed}
	}
	if strings.Contains(v.Value, "$") {
		return bad("%s: chaosrun reads extends files before interpolation", v.Value)
	}
	p := v.Value
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(s.file), p)
	}
	if !workdir.Within(ss.dir, p) {
		return bad("%s is outside the project's folder %s", p, ss.dir)
	}
	for _, o := range ss.list {
		if samePath("", o.file, p) {
			return nil
		}
	}
	if len(ss.list) >= MaxFiles {
		return bad("more than %d files in the project", MaxFiles)
	}
	data, err := read(ctx, p)
	if err != nil {
		return bad("%v", err)
	}
	ext := &source{file: p, data: data}
	if err := ext.parse(); err != nil {
		var errs scenario.Errors
		if errors.As(err, &errs) && len(errs) > 0 {
			return errs[0]
		}
		return bad("%v", err)
	}
	ss.list = append(ss.list, ext)
	return nil
}

// refuseRaw refuses what the files say that compose-go would otherwise
// act on before chaosrun sees it: include: (files from elsewhere).
func (ss *sources) refuseRaw() scenario.Errors {
	var errs scenario.Errors
	for _, s := range ss.list[:ss.main] {
		if at := keyNode(s.root, "include"); at != nil {
			errs = append(errs, &scenario.Error{File: s.file, Line: at.Line, Col: at.Column, Field: "include",
				Msg: "include: is not supported: its files would escape the import's checks", Allowed: "several files listed in the scenario's compose: (merged in order, as -f a -f b)"})
		}
	}
	return errs
}

var (
	servicePath  = regexp.MustCompile(`services\.([A-Za-z0-9._-]+?)(?:\.([a-z_]+))?(?:[^A-Za-z0-9._-]|$)`)
	serviceQuote = regexp.MustCompile(`service "([^"]+)"`)
	serviceCycle = regexp.MustCompile(`dependency cycle detected: ([^ ]+) ->`)
	// schemaError is compose-go's message for a file the specification's
	// schema refuses: the file, the path of the value, what is wrong.
	schemaError = regexp.MustCompile(`^validating (.+?): ([^ ]*) (.*)$`)
	extraKey    = regexp.MustCompile(`additional propert(?:y|ies) '([^']*)'`)
)

// locateSchema places a schema error at the key it names, in the file
// it names when that file has it.
func (ss *sources) locateSchema(m []string, msg string) *scenario.Error {
	var path []string
	if m[2] != "" {
		path = strings.Split(m[2], ".")
	}
	if k := extraKey.FindStringSubmatch(m[3]); k != nil {
		path = append(path, k[1])
		msg = fmt.Sprintf("Compose key %q is not in the Compose specification (%s)", k[1], m[3])
	} else if m[3] == "false schema" && len(path) > 0 {
		msg = fmt.Sprintf("Compose key %q is not in the Compose specification", path[len(path)-1])
	}
	field := ""
	for _, p := range path {
		field = join(field, p)
	}
	field = cmp.Or(field, fileField)
	for i, p := range path {
		if _, err := strconv.Atoi(p); err == nil {
			path = path[:i] // a list entry: placed at its list
			break
		}
	}
	e := ss.errAt(field, "", msg, path...)
	for _, s := range ss.list {
		if samePath("", s.file, m[1]) {
			for n := len(path); n > 0; n-- {
				if at := s.keyNode(path[:n]...); at != nil {
					e.File, e.Line, e.Col = s.file, at.Line, at.Column
					return e
				}
			}
		}
	}
	return e
}

// locate places an error of compose-go, which has no positions, at the
// service (and key) its message names; else at the value it quotes; else
// at services: (or the top of the first file).
func (ss *sources) locate(err error) scenario.Errors {
	msg := "Compose: " + err.Error()
	if m := schemaError.FindStringSubmatch(err.Error()); m != nil {
		return scenario.Errors{ss.locateSchema(m, msg)}
	}
	if m := serviceCycle.FindStringSubmatch(err.Error()); m != nil {
		return scenario.Errors{ss.errAt("services."+m[1]+".depends_on", "", msg, "services", m[1], "depends_on")}
	}
	if m := servicePath.FindStringSubmatch(err.Error()); m != nil {
		field := strings.TrimSuffix("services."+m[1]+"."+m[2], ".")
		path := []string{"services", m[1]}
		if m[2] != "" {
			path = append(path, m[2])
		}
		return scenario.Errors{ss.errAt(field, "", msg, path...)}
	}
	if m := serviceQuote.FindStringSubmatch(err.Error()); m != nil {
		return scenario.Errors{ss.errAt("services."+m[1], "", msg, "services", m[1])}
	}
	e := ss.errAt(fileField, "", msg, fileField)
	best := 0
	for _, s := range ss.list {
		if n, path := quoted(s.root, "", err.Error(), 0); n != nil && len(n.Value) > best {
			best, e.File, e.Line, e.Col, e.Field = len(n.Value), s.file, n.Line, n.Column, path
		}
	}
	return scenario.Errors{e}
}

// quoted finds the longest value of the file (three characters or more)
// that the message quotes, and its key path.
func quoted(n *yaml.Node, path, msg string, depth int) (*yaml.Node, string) {
	n = deref(n)
	if n == nil || depth > 30 {
		return nil, ""
	}
	var best *yaml.Node
	bestPath := ""
	consider := func(c *yaml.Node, p string) {
		if c != nil && (best == nil || len(c.Value) > len(best.Value)) {
			best, bestPath = c, p
		}
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if len(n.Value) >= 3 && strings.Contains(msg, n.Value) {
			return n, path
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			consider(quoted(e, fmt.Sprintf("%s[%d]", path, i), msg, depth+1))
		}
	case yaml.MappingNode:
		for _, p := range mappingPairs(n, 0) {
			consider(quoted(p[1], join(path, p[0].Value), msg, depth+1))
		}
	}
	return best, bestPath
}

// valueOf is the value node of key in mapping n.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for _, p := range mappingPairs(n, 0) {
		if p[0].Value == key {
			return p[1]
		}
	}
	return nil
}
