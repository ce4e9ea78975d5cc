// Package compose brings a Compose file into a scenario: its services run
// on the Docker testbed under their Compose names, each dependency edge
// through a Toxiproxy proxy that the dependency's name resolves to, so the
// application's configuration stays as it is. The file is parsed with
// compose-spec's compose-go (what Docker Compose uses); every key chaosrun
// does not honour is an error at its line and column, found with a yaml.v3
// walk since compose-go keeps no positions.
package compose

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"gopkg.in/yaml.v3"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarios"
)

// MaxSize is the largest Compose file, and env_file, read.
const MaxSize = 1 << 20

// envAllowed is what a Compose file's env_file may name.
var envAllowed = "a regular file inside the Compose file's folder, at most " + workdir.Size(MaxSize)

// Import reads the Compose file at path into scenario services, in the
// file's order. Problems are scenario.Errors at positions in the file. It
// reads at most MaxSize bytes and gives up when ctx ends.
func Import(ctx context.Context, path string) ([]scenario.Named, error) {
	data, err := read(ctx, path)
	if err != nil {
		return nil, err
	}
	return ImportBytes(path, data, os.Environ())
}

// ImportFor is Import of the Compose file a scenario file names
// (compose: name): it must lie inside the scenario's folder, symbolic links
// followed, as a workload script must; a scenario without a folder of its
// own (a catalog one) names none.
func ImportFor(ctx context.Context, scenarioFile, name string) ([]scenario.Named, error) {
	if scenarioFile == "" || scenarios.IsRef(scenarioFile) {
		return nil, fmt.Errorf("%s has no folder of its own for the Compose file %s", cmp.Or(scenarioFile, "a scenario without a file"), name)
	}
	dir := filepath.Dir(scenarioFile)
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, name)
	}
	if !workdir.Within(dir, path) {
		return nil, fmt.Errorf("%s is outside the scenario's folder %s", path, dir)
	}
	return Import(ctx, path)
}

// read reads a Compose file, at most MaxSize bytes; it gives up when ctx
// ends.
func read(ctx context.Context, path string) ([]byte, error) {
	data, err := workdir.Read(ctx, path, MaxSize, workdir.OS(path), io.ReadAll)
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	return data, nil
}

// ImportBytes is Import of data read from file, interpolating ${VAR} from
// env (KEY=VALUE entries) as Docker Compose does.
func ImportBytes(file string, data []byte, env []string) ([]scenario.Named, error) {
	root, err := parse(file, data)
	if err != nil {
		return nil, err
	}
	if errs := checkKeys(file, root); len(errs) > 0 {
		return nil, errs
	}
	proj, err := load(file, data, env)
	if err != nil {
		return nil, locate(file, root, err)
	}
	if errs := checkEnvFiles(file, root, proj); len(errs) > 0 {
		return nil, errs
	}
	// The env files are read only now that they are known to be inside
	// the project's folder and small.
	if proj, err = proj.WithServicesEnvironmentResolved(false); err != nil {
		return nil, locate(file, root, err)
	}
	names := serviceOrder(root, proj)
	var out []scenario.Named
	var errs scenario.Errors
	for _, name := range names {
		svc, es := convert(file, root, name, proj.Services[name])
		errs = append(errs, es...)
		out = append(out, scenario.Named{Name: name, Service: svc})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// parse reads the file's single YAML document into nodes.
func parse(file string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, scenario.Errors{{File: file, Line: 1, Col: 1, Field: fileField, Msg: "the Compose file is empty"}}
		}
		return nil, scenario.Errors{yamlError(file, data, err)}
	}
	if e := recursiveAlias(file, &doc, "", nil, 0); e != nil {
		return nil, scenario.Errors{e}
	}
	if len(doc.Content) == 0 || deref(doc.Content[0]) == nil || deref(doc.Content[0]).Kind != yaml.MappingNode {
		return nil, scenario.Errors{{File: file, Line: max(doc.Line, 1), Col: max(doc.Column, 1), Field: fileField, Msg: "a Compose file is a mapping with services:"}}
	}
	return doc.Content[0], nil
}

// load parses the file with compose-go: interpolation, env_file, the
// short and long forms, and the specification's own validation.
func load(file string, data []byte, env []string) (*types.Project, error) {
	dir := filepath.Dir(file)
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	details := types.ConfigDetails{
		WorkingDir:  dir,
		ConfigFiles: []types.ConfigFile{{Filename: abs, Content: data}},
		Environment: types.NewMapping(env),
	}
	proj, err := loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName(projectName(file), true)
		o.SkipInclude = true
		o.SkipExtends = true
		o.SkipResolveEnvironment = true // after checkEnvFiles
		o.ResourceLoaders = nil
	})
	if err != nil {
		return nil, err
	}
	return proj, nil
}

var (
	servicePath  = regexp.MustCompile(`services\.([A-Za-z0-9._-]+?)(?:\.([a-z_]+))?(?:[^A-Za-z0-9._-]|$)`)
	serviceQuote = regexp.MustCompile(`service "([^"]+)"`)
	serviceCycle = regexp.MustCompile(`dependency cycle detected: ([^ ]+) ->`)
)

// locate places an error of compose-go, which has no positions, at the
// service (and key) its message names; else at the value it quotes; else
// at services: (or the top of the file).
func locate(file string, root *yaml.Node, err error) scenario.Errors {
	e := &scenario.Error{File: file, Line: 1, Col: 1, Field: fileField, Msg: "Compose: " + err.Error()}
	at := keyNode(root, fileField)
	if m := serviceCycle.FindStringSubmatch(err.Error()); m != nil {
		at, e.Field = keyNode(root, "services", m[1], "depends_on"), "services."+m[1]+".depends_on"
	} else if m := servicePath.FindStringSubmatch(err.Error()); m != nil {
		if at = keyNode(root, "services", m[1], m[2]); at == nil {
			at = keyNode(root, "services", m[1])
		}
		e.Field = strings.TrimSuffix("services."+m[1]+"."+m[2], ".")
	} else if m := serviceQuote.FindStringSubmatch(err.Error()); m != nil {
		at = keyNode(root, "services", m[1])
		e.Field = "services." + m[1]
	} else if n, path := quoted(root, "", err.Error(), 0); n != nil {
		at, e.Field = n, path // the value the message quotes
	}
	if at != nil {
		e.Line, e.Col = at.Line, at.Column
	}
	return scenario.Errors{e}
}

// projectName is a Compose project name from the file's folder.
func projectName(file string) string {
	abs, _ := filepath.Abs(file)
	if n := loader.NormalizeProjectName(filepath.Base(filepath.Dir(abs))); n != "" {
		return n
	}
	return "chaosrun"
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

// serviceOrder lists the project's services in the file's order.
func serviceOrder(root *yaml.Node, proj *types.Project) []string {
	var out []string
	if svcs := deref(valueOf(root, "services")); svcs != nil && svcs.Kind == yaml.MappingNode {
		for _, p := range mappingPairs(svcs, 0) {
			if _, ok := proj.Services[p[0].Value]; ok && !slices.Contains(out, p[0].Value) {
				out = append(out, p[0].Value)
			}
		}
	}
	var rest []string
	for n := range proj.Services {
		if !slices.Contains(out, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
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
