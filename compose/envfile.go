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
// project lies inside the Compose file's folder (symbolic links followed,
// as a scenario's files must lie in its own) and is a regular file of at
// most MaxSize bytes: not /dev/zero, not a FIFO. A missing one is left to
// compose-go, which knows whether it is required.
func checkEnvFiles(file string, root *yaml.Node, proj *types.Project) scenario.Errors {
	dir := filepath.Dir(file)
	var errs scenario.Errors
	for _, name := range serviceOrder(root, proj) {
		for _, ef := range proj.Services[name].EnvFiles {
			why := envFileProblem(dir, ef.Path)
			if why == "" {
				continue
			}
			e := &scenario.Error{File: file, Line: 1, Col: 1, Field: "services." + name + ".env_file", Msg: why, Allowed: envAllowed}
			if at := envFileNode(root, name, dir, ef.Path); at != nil {
				e.Line, e.Col = at.Line, at.Column
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
		return fmt.Sprintf("%s is outside the Compose file's folder %s", p, dir)
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

// envFileNode is the node of service name's env_file entry that names p
// (a path resolved against dir), else its env_file value.
func envFileNode(root *yaml.Node, name, dir, p string) *yaml.Node {
	v := deref(valueOf(deref(valueOf(root, "services")), name))
	v = deref(valueOf(v, "env_file"))
	if v == nil || v.Kind != yaml.SequenceNode {
		return v
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
	return v
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
