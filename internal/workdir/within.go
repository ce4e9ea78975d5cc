package workdir

import (
	"path/filepath"
	"strings"
)

// Within reports whether p lies inside folder root once symbolic links of
// both are followed (as far as they exist).
func Within(root, p string) bool {
	r, err := realPath(root)
	if err != nil {
		return false
	}
	q, err := realPath(p)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(r, q)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// realPath is p absolute, with the symbolic links of its longest existing
// prefix followed.
func realPath(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...), nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}
