// Package workdir is the working directory and filesystem a command sees:
// relative paths resolve against Dir and are read from FS (rooted at "/"),
// and errors name a path as the user gave it.
package workdir

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// FS reads files for a command: FS is rooted at "/", Dir is the working
// directory relative paths resolve against.
type FS struct {
	FS  fs.FS
	Dir string
}

// Path resolves p against the working directory.
func (w FS) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(w.Dir, p)
}

// Name is p's name in FS.
func (w FS) Name(p string) string {
	name := strings.TrimPrefix(filepath.ToSlash(filepath.Clean(w.Path(p))), "/")
	if name == "" {
		return "."
	}
	return name
}

// Open opens p in FS; errors name p as it was given.
func (w FS) Open(p string) (fs.File, error) {
	f, err := w.FS.Open(w.Name(p))
	return f, named(err, p)
}

// Stat describes p in FS; errors name p as it was given.
func (w FS) Stat(p string) (fs.FileInfo, error) {
	fi, err := fs.Stat(w.FS, w.Name(p))
	return fi, named(err, p)
}

// ReadDir lists folder p in FS, sorted by name.
func (w FS) ReadDir(p string) ([]fs.DirEntry, error) {
	ents, err := fs.ReadDir(w.FS, w.Name(p))
	return ents, named(err, p)
}

func named(err error, p string) error {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		pe.Path = p
	}
	return err
}
