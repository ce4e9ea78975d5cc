package workloads

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/scenarios"
)

// ScriptsDir is the bundled scripts folder of the repository at root.
func ScriptsDir(root string) string { return filepath.Join(root, "workloads") }

// ResolveScript finds a scenario's workload script: beside the scenario
// file first, then in dir (the bundled scripts folder; "" when there is
// none). A script must stay inside one of these two folders, symbolic
// links followed: "../../etc/passwd", or an absolute path elsewhere, is
// refused. It errs when the script is in neither place.
func ResolveScript(scenarioFile, script, dir string) (string, error) {
	if script == "" {
		return "", fmt.Errorf("workload script: no file named")
	}
	var roots []string
	if scenarioFile != "" && !scenarios.IsRef(scenarioFile) {
		roots = append(roots, filepath.Dir(scenarioFile))
	}
	if dir != "" {
		roots = append(roots, dir)
	}
	if len(roots) == 0 {
		return "", fmt.Errorf("workload script %s: no scenario file and no scripts folder to look in", script)
	}
	var why []string
	for _, root := range roots {
		p := script
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, script)
		}
		if !workdir.Within(root, p) {
			why = append(why, fmt.Sprintf("%s is outside %s", p, root))
			continue
		}
		err := isFile(p)
		if err == nil {
			return p, nil
		}
		why = append(why, err.Error())
	}
	return "", fmt.Errorf("workload script %s: not found inside the scenario's folder or the bundled scripts: %s", script, strings.Join(why, "; "))
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

// CheckScript checks, before anything starts, that the scenario's workload
// script (if it names one) is found where a run would look for it; the
// error is positioned at workload.script. scenarioPath is the scenario
// file's path on disk; dir the bundled scripts folder, "" when none.
func CheckScript(sc *scenario.Scenario, scenarioPath, dir string) error {
	if sc.Workload.Script == "" {
		return nil
	}
	if _, err := ResolveScript(scenarioPath, sc.Workload.Script, dir); err != nil {
		return scenario.Errors{sc.Problem("workload.script", "a script in the scenario's folder or a bundled one", "%v", err)}
	}
	return nil
}

// executorRE finds `executor: 'NAME'` in a script's options.
var executorRE = regexp.MustCompile("executor\\s*:\\s*['\"`]([a-z-]+)['\"`]")

// ScriptExecutors are the k6 executors a script's options name, in order,
// each once: a light scan, not an evaluation (an executor chosen at run
// time from __ENV is listed with the others). None when it names none:
// k6 then runs its VUs in a closed loop.
func ScriptExecutors(src []byte) []string {
	var out []string
	for _, m := range executorRE.FindAllSubmatch(src, -1) {
		if e := string(m[1]); !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// maxScriptScan bounds the script read for ScriptExecutors.
const maxScriptScan = 4 << 20

// NoteExecutors fills sc.Workload.Executors from its script, found as
// CheckScript finds it; a script that cannot be read leaves it empty.
func NoteExecutors(sc *scenario.Scenario, scenarioPath, dir string) {
	path, err := ResolveScript(scenarioPath, sc.Workload.Script, dir)
	if err != nil {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxScriptScan))
	if err == nil {
		sc.Workload.Executors = ScriptExecutors(src)
	}
}
