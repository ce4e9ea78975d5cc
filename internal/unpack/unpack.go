// Package unpack writes a tree of files embedded in the binary to disk,
// once: into a folder named for the tree's content, which every later
// call (and every other process) reuses. An installed chaosrun thus hands
// programs that need real files (k6, the Go toolchain) the copies it
// carries.
package unpack

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Tree writes every regular file of fsys to parent/prefix-HASH, HASH being
// the first 12 hex digits of a SHA-256 over the files' slash paths and
// bytes, and returns that folder. A folder of that name is taken as
// written: the tree is written beside it first and renamed into place, so
// a reader never sees half of it.
func Tree(fsys fs.FS, parent, prefix string) (string, error) {
	hash, err := Hash(fsys)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(parent, prefix+"-"+hash)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("unpack %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, prefix+".tmp-")
	if err != nil {
		return "", fmt.Errorf("unpack %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	if err := write(fsys, tmp); err != nil {
		return "", fmt.Errorf("unpack %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process may have put the same tree in place first.
		if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
			return dir, nil
		}
		return "", fmt.Errorf("unpack %s: %w", dir, err)
	}
	return dir, nil
}

// Hash is the first 12 hex digits of a SHA-256 over fsys's regular files,
// in walk (lexical) order: each file's slash path, a NUL, its bytes, a NUL.
func Hash(fsys fs.FS) (string, error) {
	h := sha256.New()
	n := 0
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		io.WriteString(h, p+"\x00") //nolint:errcheck // hashes do not fail
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		h.Write([]byte{0})
		n++
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash embedded files: %w", err)
	}
	if n == 0 {
		return "", errors.New("hash embedded files: none")
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// write copies fsys's regular files into dir, keeping their folders.
func write(fsys fs.FS, dir string) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !fs.ValidPath(p) || path.IsAbs(p) {
			return fmt.Errorf("%q: not a path inside the tree", p)
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}
