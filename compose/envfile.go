package compose

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/types"
	"gopkg.in/yaml.v3"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
)

// checkEnvFiles checks, before any is read, that every env_file of the
// project lies inside the project's folder (symbolic links followed, as a
// scenario's files must lie in its own) and is a regular file of at most
// MaxSize bytes: not /dev/zero, not a FIFO. A missing one is left to
// compose-go, which knows whether it is required.
func (ss *sources) checkEnvFiles(proj *types.Project) scenario.Errors {
	var errs scenario.Errors
	for _, name := range ss.serviceOrder(proj) {
		for _, ef := range proj.Services[name].EnvFiles {
			why := envFileProblem(ss.dir, ef.Path)
			if why == "" {
				continue
			}
			e := ss.errAt("services."+name+".env_file", envAllowed, why, "services", name, "env_file")
			for _, s := range ss.list {
				if at := envFileNode(s, name, ef.Path); at != nil {
					e.File, e.Line, e.Col = s.file, at.Line, at.Column
					break
				}
			}
			errs = append(errs, e)
		}
	}
	return errs
}

// envFileProblem says what is wrong with env file p of a project in dir,
// or "".
func envFileProblem(dir, p string) string {
	if !workdir.Within(dir, p) {
		return fmt.Sprintf("%s is outside the project's folder %s", p, dir)
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return ""
	case !fi.Mode().IsRegular():
		return fmt.Sprintf("%s is not a regular file", p)
	case fi.Size() > MaxSize:
		return fmt.Sprintf("%s is larger than %s", p, workdir.Size(MaxSize))
	}
	return ""
}

// envFileNode is the node of service name's env_file entry in s that
// names p (a path resolved against the file's folder); nil when there is
// none.
func envFileNode(s *source, name, p string) *yaml.Node {
	dir := filepath.Dir(s.file)
	v := deref(valueOf(s.services[name][1], "env_file"))
	if v != nil && v.Kind == yaml.ScalarNode && samePath(dir, v.Value, p) {
		return v
	}
	if v == nil || v.Kind != yaml.SequenceNode {
		return nil
	}
	for _, item := range v.Content {
		item = deref(item)
		if item != nil && item.Kind == yaml.MappingNode {
			item = deref(valueOf(item, "path"))
		}
		if item != nil && item.Kind == yaml.ScalarNode && samePath(dir, item.Value, p) {
			return item
		}
	}
	return nil
}

// samePath reports whether v, relative to dir, is p.
func samePath(dir, v, p string) bool {
	if !filepath.IsAbs(v) {
		v = filepath.Join(dir, v)
	}
	a, err1 := filepath.Abs(v)
	b, err2 := filepath.Abs(p)
	return err1 == nil && err2 == nil && a == b
}
