package compose

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/chaosrun/chaosrun/scenario"
)

// fileField is the key a problem of the whole file is placed at: the one
// key a Compose file must have.
const fileField = "services"

var (
	yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)
	// keyLine is a line that holds a mapping key: blanks, "- " entries,
	// the key, a colon that ends the line or is followed by a blank.
	keyLine = regexp.MustCompile(`^[ \t]*(?:-[ \t]+)*([^\s#:'"\[\]{},&*!|>%@` + "`" + `-][^:#]*?)[ \t]*:(?:[ \t]|$)`)
)

// yamlError places a YAML syntax error of data: at the line the parser
// names, else at the first character YAML does not allow (its own
// message has no position), at the key written on or above that line.
func yamlError(file string, data []byte, err error) *scenario.Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line, col := 1, 1
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimPrefix(err.Error(), m[0])
	} else if i := badChar(data); i >= 0 {
		line, col = scenario.LineCol(data, i)
	}
	return &scenario.Error{File: file, Line: max(line, 1), Col: col, Field: keyAbove(data, line), Msg: "invalid YAML: " + msg}
}

// badChar is the offset of the first byte that is not UTF-8 or a
// character YAML does not allow; -1 when there is none.
func badChar(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return i
		}
		i += size
	}
	return -1
}

// keyAbove is the mapping key written on line (1-based) or the nearest
// line above it that holds one; fileField when none does.
func keyAbove(data []byte, line int) string {
	lines := strings.Split(string(data), "\n")
	for i := min(line, len(lines)) - 1; i >= 0; i-- {
		if m := keyLine.FindStringSubmatch(lines[i]); m != nil {
			return m[1]
		}
	}
	return fileField
}

// maxDepth bounds how deep the walks of the file's nodes go.
const maxDepth = 64

// MaxNodes bounds the nodes of one file with its aliases expanded: a few
// hundred bytes of nested aliases (an alias bomb) expand to billions.
const MaxNodes = 200_000

// checkAliases walks the document as its readers will, aliases followed,
// and refuses it when it nests deeper than maxDepth, expands to more than
// MaxNodes nodes, or holds an alias inside the node its anchor names (&a
// [*a]: YAML allows it, but no walk of it ends). An alias can only name
// an anchor already seen, so a cycle always runs through one that names
// a node still open: one of its ancestors.
func checkAliases(file string, doc *yaml.Node) *scenario.Error {
	w := aliasWalk{file: file}
	return w.walk(doc, "", 0)
}

type aliasWalk struct {
	file  string
	open  []*yaml.Node
	nodes int
}

func (w *aliasWalk) walk(n *yaml.Node, path string, depth int) *scenario.Error {
	if n == nil {
		return nil
	}
	at := func(format string, args ...any) *scenario.Error {
		return &scenario.Error{File: w.file, Line: max(n.Line, 1), Col: max(n.Column, 1), Field: cmp.Or(path, fileField), Msg: fmt.Sprintf(format, args...)}
	}
	if w.nodes++; w.nodes > MaxNodes {
		return at("the file expands to more than %d YAML nodes (aliases of aliases?)", MaxNodes)
	}
	if depth > maxDepth {
		return at("nested more than %d levels deep", maxDepth)
	}
	if n.Kind == yaml.AliasNode {
		if slices.Contains(w.open, n.Alias) {
			return at("alias *%s is inside the value its anchor names: a recursive value", n.Value)
		}
		return w.walk(n.Alias, path, depth+1)
	}
	w.open = append(w.open, n)
	defer func() { w.open = w.open[:len(w.open)-1] }()
	for i, c := range n.Content {
		p := path
		switch {
		case n.Kind == yaml.MappingNode && i%2 == 1:
			p = join(path, n.Content[i-1].Value)
		case n.Kind == yaml.SequenceNode:
			p = fmt.Sprintf("%s[%d]", path, i)
		}
		if e := w.walk(c, p, depth+1); e != nil {
			return e
		}
	}
	return nil
}
