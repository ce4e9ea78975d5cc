// Command k8sschemas refreshes the schemas that export/k8s's tests check
// the exported manifests against: Kubernetes' OpenAPI v3 specs for the API
// groups the export writes (core/v1, apps/v1, batch/v1), from the Go module
// k8s.io/kubernetes, and (when the module proxy serves it) the k6-operator's
// TestRun CRD, from the module github.com/grafana/k6-operator.
//
// A spec keeps its components.schemas whole; its paths and every schema's
// description are dropped (neither takes part in validation), which brings
// the three specs from 3.6 MB to about 0.3 MB. The CRD is copied unchanged.
//
//	go run ./scripts/k8sschemas -kubernetes v1.37.2 [-k6-operator vX.Y.Z]
//
// Run it from the repository's root; export/k8s/testdata/schemas/README.md
// says where every file came from.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// specs are the files of k8s.io/kubernetes that the export's kinds need.
var specs = []string{
	"api__v1_openapi.json",
	"apis__apps__v1_openapi.json",
	"apis__batch__v1_openapi.json",
}

const (
	specDir = "api/openapi-spec/v3"
	crdPath = "config/crd/bases/k6.io_testruns.yaml"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "k8sschemas:", err)
		os.Exit(1)
	}
}

func run() error {
	k8s := flag.String("kubernetes", "", "version of the module k8s.io/kubernetes to take the OpenAPI specs from (e.g. v1.37.2)")
	k6op := flag.String("k6-operator", "", "version of the module github.com/grafana/k6-operator to take the TestRun CRD from (optional)")
	out := flag.String("out", filepath.Join("export", "k8s", "testdata", "schemas"), "the schema folder")
	flag.Parse()
	if *k8s == "" {
		return errors.New("-kubernetes VERSION is required")
	}
	dir, err := moduleDir("k8s.io/kubernetes", *k8s)
	if err != nil {
		return err
	}
	for _, name := range specs {
		if err := pruneSpec(filepath.Join(dir, specDir, name), filepath.Join(*out, "kubernetes", name)); err != nil {
			return err
		}
	}
	if *k6op == "" {
		return nil
	}
	if dir, err = moduleDir("github.com/grafana/k6-operator", *k6op); err != nil {
		return err
	}
	crd, err := os.ReadFile(filepath.Join(dir, crdPath))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*out, "k6-operator", filepath.Base(crdPath)), crd, 0o644)
}

// moduleDir downloads module@version through the Go module proxy, in a
// scratch module so that no go.mod of the repository changes, and returns
// the folder it was unpacked into.
func moduleDir(module, version string) (string, error) {
	tmp, err := os.MkdirTemp("", "k8sschemas")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module k8sschemas.invalid\n\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil || info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %v %s %s", module, version, runErr, info.Error, stderr.String())
	}
	return info.Dir, nil
}

// pruneSpec writes the spec at src to dst with its openapi version, info
// and component schemas only, descriptions dropped.
func pruneSpec(src, dst string) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var spec struct {
		OpenAPI    string         `json:"openapi"`
		Info       map[string]any `json:"info"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if len(spec.Components.Schemas) == 0 {
		return fmt.Errorf("%s: no components.schemas", src)
	}
	for _, s := range spec.Components.Schemas {
		stripDescriptions(s)
	}
	b, err := json.MarshalIndent(map[string]any{
		"openapi":    spec.OpenAPI,
		"info":       spec.Info,
		"components": map[string]any{"schemas": spec.Components.Schemas},
	}, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, append(b, '\n'), 0o644)
}

// stripDescriptions drops the description of a schema and of every schema
// inside it. It follows the schema keywords, so that a property that is
// itself named "description" stays.
func stripDescriptions(v any) {
	s, ok := v.(map[string]any)
	if !ok {
		return
	}
	delete(s, "description")
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			stripDescriptions(p)
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		stripDescriptions(s[k])
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			for _, x := range list {
				stripDescriptions(x)
			}
		}
	}
}
