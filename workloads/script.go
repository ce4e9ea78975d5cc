package workloads

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/chaosrun/chaosrun/scenarios"
)

// ScriptsDir is the bundled scripts folder of the repository at root.
func ScriptsDir(root string) string { return filepath.Join(root, "workloads") }

// ResolveScript finds a scenario's workload script: an absolute path as
// it is; else beside the scenario file first, then in dir (the bundled
// scripts folder; "" when there is none). A catalog scenario
// (catalog:NAME) has no folder: its scripts are the bundled ones. It errs
// when the script is in none of these places.
func ResolveScript(scenarioFile, script, dir string) (string, error) {
	if script == "" {
		return "", fmt.Errorf("workload script: no file named")
	}
	var tried []string
	switch {
	case filepath.IsAbs(script):
		tried = []string{script}
	default:
		if scenarioFile != "" && !scenarios.IsRef(scenarioFile) {
			tried = append(tried, filepath.Join(filepath.Dir(scenarioFile), script))
		}
		if dir != "" {
			tried = append(tried, filepath.Join(dir, script))
		}
	}
	var why []string
	for _, p := range tried {
		err := isFile(p)
		if err == nil {
			return p, nil
		}
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		return "", fmt.Errorf("workload script %s: no scenario file and no scripts folder to look in", script)
	}
	return "", fmt.Errorf("workload script %s: not found (looked beside the scenario, then in the bundled scripts): %s", script, strings.Join(why, "; "))
}

// isFile is nil when p is a file (not a folder).
func isFile(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a folder", p)
	}
	return nil
}
