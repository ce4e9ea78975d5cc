// Package compose brings a Compose project into a scenario: its services
// run on the Docker testbed under their Compose names, each dependency
// edge through a Toxiproxy proxy that the dependency's name resolves to,
// so the application's configuration stays as it is. The project is loaded
// by compose-spec's compose-go (what Docker Compose uses): several files
// merged in order, compose.override.yaml, extends, profiles, ${VAR}
// interpolation and env_file, every key kept. The few keys chaosrun cannot
// honour are errors at their file, line and column, found with a yaml.v3
// walk of each file since compose-go keeps no positions.
package compose

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// MaxFiles bounds the files of one project: those named, the override
// and the files extends: names.
const MaxFiles = 32

// envAllowed is what a Compose file's env_file may name.
var envAllowed = "a regular file inside the project's folder, at most " + workdir.Size(MaxSize)

// Options says how a project is loaded, as docker compose's own flags and
// environment do.
type Options struct {
	// Profiles are the profiles enabled (--profile); when there are none,
	// COMPOSE_PROFILES in Env names them (comma-separated).
	Profiles []string
	// Env is the environment ${VAR} reads (KEY=VALUE entries); nil is the
	// process's own.
	Env []string
}

func (o Options) env() []string {
	if o.Env == nil {
		return os.Environ()
	}
	return o.Env
}

// profiles are the profiles enabled: Profiles, else COMPOSE_PROFILES.
func (o Options) profiles() []string {
	if len(o.Profiles) > 0 {
		return o.Profiles
	}
	for _, kv := range o.env() {
		if v, ok := strings.CutPrefix(kv, "COMPOSE_PROFILES="); ok {
			var out []string
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
			return out
		}
	}
	return nil
}

// Import reads the project of the Compose files at paths (merged in
// order, as docker compose -f a -f b merges them; with one file, the
// compose.override.yaml or docker-compose.override.yml beside it follows
// it, as Compose does) into scenario services, in the files' order.
// Problems are scenario.Errors at positions in the files. It reads at
// most MaxSize bytes of each file and gives up when ctx ends.
func Import(ctx context.Context, paths []string, o Options) ([]scenario.Named, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("compose: no Compose file named")
	}
	if len(paths) == 1 {
		if ov := override(paths[0]); ov != "" {
			paths = append(slices.Clone(paths), ov)
		}
	}
	srcs := make([]*source, 0, len(paths))
	for _, p := range paths {
		if len(srcs) >= MaxFiles {
			return nil, fmt.Errorf("compose: more than %d files", MaxFiles)
		}
		data, err := read(ctx, p)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, &source{file: p, data: data})
	}
	return importSources(ctx, srcs, o)
}

// overrides are the files Compose merges after the one it is given.
var overrides = map[string][]string{
	"compose.yaml":        {"compose.override.yaml", "compose.override.yml"},
	"compose.yml":         {"compose.override.yml", "compose.override.yaml"},
	"docker-compose.yml":  {"docker-compose.override.yml", "docker-compose.override.yaml"},
	"docker-compose.yaml": {"docker-compose.override.yaml", "docker-compose.override.yml"},
}

// override is the override file beside path that Compose would merge
// after it, or "".
func override(path string) string {
	for _, name := range overrides[filepath.Base(path)] {
		p := filepath.Join(filepath.Dir(path), name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// ImportFor is Import of the Compose files a scenario file names
// (compose: names): each must lie inside the scenario's folder, symbolic
// links followed, as a workload script must; a scenario without a folder
// of its own (a catalog one) names none.
func ImportFor(ctx context.Context, scenarioFile string, names []string, o Options) ([]scenario.Named, error) {
	if scenarioFile == "" || scenarios.IsRef(scenarioFile) {
		return nil, fmt.Errorf("%s has no folder of its own for the Compose file %s", cmp.Or(scenarioFile, "a scenario without a file"), strings.Join(names, ", "))
	}
	dir := filepath.Dir(scenarioFile)
	paths := make([]string, 0, len(names))
	for _, name := range names {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, name)
		}
		if !workdir.Within(dir, path) {
			return nil, fmt.Errorf("%s is outside the scenario's folder %s", path, dir)
		}
		paths = append(paths, path)
	}
	return Import(ctx, paths, o)
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

// ImportBytes is Import of data read from file (no override, no
// profiles), interpolating ${VAR} from env (KEY=VALUE entries) as Docker
// Compose does.
func ImportBytes(file string, data []byte, env []string) ([]scenario.Named, error) {
	if env == nil {
		env = []string{}
	}
	return importSources(context.Background(), []*source{{file: file, data: data}}, Options{Env: env})
}

// importSources loads the project of srcs (merged in order); it gives up
// when ctx ends, whatever the input.
func importSources(ctx context.Context, srcs []*source, o Options) ([]scenario.Named, error) {
	type result struct {
		out []scenario.Named
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := importNow(ctx, srcs, o)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("compose: %w", ctx.Err())
	}
}

// importNow is importSources' work, checking ctx between its steps.
func importNow(ctx context.Context, srcs []*source, o Options) ([]scenario.Named, error) {
	ss, err := parseAll(ctx, srcs)
	if err != nil {
		return nil, err
	}
	proj, err := load(ctx, ss, o)
	if err != nil {
		return nil, err
	}
	if errs := append(ss.refuseRaw(), ss.refusals(proj)...); len(errs) > 0 {
		return nil, errs
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []scenario.Named
	var errs scenario.Errors
	for _, name := range ss.serviceOrder(proj) {
		svc, es := ss.convert(proj, name)
		errs = append(errs, es...)
		out = append(out, scenario.Named{Name: name, Service: svc})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// parseAll parses each file, and the files their extends: name (which
// must lie inside the project's folder), into one set of sources.
func parseAll(ctx context.Context, srcs []*source) (*sources, error) {
	ss := &sources{dir: filepath.Dir(srcs[0].file), main: len(srcs)}
	for _, s := range srcs {
		if err := s.parse(); err != nil {
			return nil, err
		}
		ss.list = append(ss.list, s)
	}
	if errs := ss.readExtends(ctx); len(errs) > 0 {
		return nil, errs
	}
	return ss, ctx.Err()
}

// load parses the project with compose-go: merging, extends, profiles,
// interpolation, the short and long forms, the specification's own
// validation, then env_file (once each is known to be inside the project's
// folder and small).
func load(ctx context.Context, ss *sources, o Options) (*types.Project, error) {
	details := types.ConfigDetails{WorkingDir: ss.dir, Environment: types.NewMapping(o.env())}
	for _, s := range ss.list[:ss.main] {
		abs, err := filepath.Abs(s.file)
		if err != nil {
			abs = s.file
		}
		details.ConfigFiles = append(details.ConfigFiles, types.ConfigFile{Filename: abs, Content: s.data})
	}
	proj, err := loadProject(ctx, details, func(lo *loader.Options) {
		lo.SetProjectName(projectName(ss), true)
		lo.Profiles = o.profiles()
		lo.SkipInclude = true
		lo.SkipResolveEnvironment = true // after checkEnvFiles
		lo.ResourceLoaders = nil
	})
	if err != nil {
		return nil, ss.locate(err)
	}
	if errs := ss.checkDependencies(proj); len(errs) > 0 {
		return nil, errs
	}
	if errs := ss.checkEnvFiles(proj); len(errs) > 0 {
		return nil, errs
	}
	if proj, err = proj.WithServicesEnvironmentResolved(false); err != nil {
		return nil, ss.locate(err)
	}
	return proj, ctx.Err()
}

// projectName is the project's name: the name: of its files (the last
// that sets one), else its folder's, as Compose names it.
func projectName(ss *sources) string {
	name := ""
	for _, s := range ss.list[:ss.main] {
		if v := deref(valueOf(s.root, "name")); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" && !strings.Contains(v.Value, "$") {
			name = v.Value
		}
	}
	if n := loader.NormalizeProjectName(name); n != "" {
		return n
	}
	abs, _ := filepath.Abs(ss.dir)
	if n := loader.NormalizeProjectName(filepath.Base(abs)); n != "" {
		return n
	}
	return "chaosrun"
}
