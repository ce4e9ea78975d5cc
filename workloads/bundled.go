package workloads

import (
	"embed"
	"io/fs"

	"github.com/chaosrun/chaosrun/internal/unpack"
)

//go:embed *.js
var bundled embed.FS

// Bundled is the bundled k6 scripts (this folder's *.js), embedded in the
// binary.
func Bundled() fs.FS { return bundled }

// BundledDir is the bundled scripts folder a run resolves scripts in: the
// checkout's (ScriptsDir) when root is one, else the embedded scripts,
// written once under cache into a folder named for their content.
func BundledDir(root, cache string) (string, error) {
	if root != "" {
		return ScriptsDir(root), nil
	}
	return unpack.Tree(bundled, cache, "scripts")
}
