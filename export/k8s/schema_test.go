package k8s

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chaosrun/chaosrun/scenario"
)

// The schemas under testdata/schemas come from the Go modules named in its
// README.md; this refreshes them (Kubernetes' specs; add -k6-operator
// VERSION for the TestRun CRD where the module proxy serves it).
//go:generate go run ../../scripts/k8sschemas -kubernetes v1.37.2 -out testdata/schemas

var schemas = sync.OnceValues(func() (*schemaSet, error) { return loadSchemas(schemaDir) })

func mustSchemas(t *testing.T) *schemaSet {
	t.Helper()
	s, err := schemas()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGoldenManifestsMatchSchemas checks every document of every golden
// manifest file against the schema of its apiVersion and kind.
func TestGoldenManifestsMatchSchemas(t *testing.T) {
	s := mustSchemas(t)
	files, err := filepath.Glob(filepath.Join("testdata", "*.k8s.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden manifests: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if err := s.validateStream(readFile(t, f)); err != nil {
				t.Fatalf("%s breaks the schemas:\n%v", f, err)
			}
		})
	}
}

// TestCatalogManifestsMatchSchemas exports every catalog scenario a
// cluster can run, native and k6 alike, in both modes — with every option
// that adds objects (results to a receiver elsewhere over TLS with a CA, a
// namespace), and with the judge in the manifests (the load, the TestRun
// of a k6 scenario included, streaming to it) — and checks each document
// against its schema.
func TestCatalogManifestsMatchSchemas(t *testing.T) {
	s := mustSchemas(t)
	root := filepath.Join("..", "..", "scenarios")
	files, err := filepath.Glob(filepath.Join(root, "*.yaml"))
	k6, err2 := filepath.Glob(filepath.Join(root, "k6", "*.yaml"))
	if err != nil || err2 != nil || len(files) == 0 || len(k6) == 0 {
		t.Fatalf("no catalog: %v %v", err, err2)
	}
	modes := []struct {
		name string
		set  func(o *Options)
	}{
		{"results elsewhere", func(o *Options) {
			o.ResultsAddr, o.ResultsToken, o.ResultsCA = "harness.example:7000", "r", []byte(testCA)
		}},
		{"judge", func(o *Options) { o.ResultsToken = "r" }},
	}
	kinds := map[string]map[string]bool{}
	for _, f := range append(files, k6...) {
		name, _ := filepath.Rel(root, f)
		sc, o := load(t, name)
		if hostFaults(sc) {
			continue // the export refuses it (TestCatalogRoundTrip)
		}
		for _, mode := range modes {
			t.Run(name+"/"+mode.name, func(t *testing.T) {
				o := o
				o.Parallelism, o.Namespace = 3, "load-tests"
				mode.set(&o)
				doc := export(t, sc, o)
				if err := s.validateStream(doc); err != nil {
					t.Fatalf("the manifests break the schemas:\n%v", err)
				}
				if judged := strings.Contains(string(doc), "name: "+JudgeName+"\n"); judged != (mode.name == "judge") {
					t.Errorf("the manifests hold a judge: %v, want %v", judged, mode.name == "judge")
				}
				if kinds[mode.name] == nil {
					kinds[mode.name] = map[string]bool{}
				}
				for _, d := range splitDocs(doc) {
					obj, _ := yamlObject(d)
					kinds[mode.name][dig(obj, "kind").(string)] = true
				}
			})
		}
	}
	for _, mode := range modes {
		for _, k := range []string{"Namespace", "Secret", "ConfigMap", "Deployment", "Service", "Job", TestRunKind} {
			if !kinds[mode.name][k] {
				t.Errorf("%s: no catalog scenario exports a %s: its schema went unchecked", mode.name, k)
			}
		}
	}
}

// TestSchemasRejectBrokenManifests breaks one exported document at a time:
// the schema check refuses each, naming where.
func TestSchemasRejectBrokenManifests(t *testing.T) {
	s := mustSchemas(t)
	bank := exportDocs(t, "bank-slow-vault.yaml")
	kv := exportDocs(t, "k6/kv-hot-key-flood.yaml") // a k6 workload: its load is a TestRun
	tests := []struct {
		name    string
		docs    []map[string]any
		kind    string
		corrupt func(obj map[string]any)
		want    []string
	}{
		{"replicas is a string", bank, "Deployment", func(o map[string]any) { set(o, "2", "spec", "replicas") },
			[]string{"at '/spec/replicas'", "want integer"}},
		{"replicas beyond int32", bank, "Deployment", func(o map[string]any) { set(o, json.Number("3000000000"), "spec", "replicas") },
			[]string{"at '/spec/replicas'", "int32"}},
		{"an unknown container field", bank, "Deployment", func(o map[string]any) {
			container(o)["imagePullPolicyy"] = "Always"
		}, []string{"at '/spec/template/spec/containers/0'", "'imagePullPolicyy' not allowed"}},
		{"a container without a name", bank, "Deployment", func(o map[string]any) { delete(container(o), "name") },
			[]string{"at '/spec/template/spec/containers/0'", "missing property 'name'"}},
		{"two env vars of one name", bank, "Deployment", func(o map[string]any) {
			c := container(o)
			c["env"] = []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "A", "value": "2"}}
		}, []string{"at '/spec/template/spec/containers/0/env'", "have the same name"}},
		{"two Service ports on one port, one TCP by default", bank, "Service", func(o map[string]any) {
			ports := dig(o, "spec", "ports").([]any)
			dup := map[string]any{"name": "again", "port": dig(ports[0], "port")}
			set(o, append(ports, dup), "spec", "ports")
		}, []string{"at '/spec/ports'", "items at 0 and", "have the same port, protocol"}},
		{"a Service port as a string", bank, "Service", func(o map[string]any) {
			set(o, "8080", "spec", "ports", "0", "port")
		}, []string{"at '/spec/ports/0/port'", "want integer"}},
		{"an unknown field of a Job's spec", bank, "Job", func(o map[string]any) { set(o, true, "spec", "indexed") },
			[]string{"at '/spec'", "'indexed' not allowed"}},
		{"an unknown metadata field", bank, "Service", func(o map[string]any) { set(o, "x", "metadata", "nmae") },
			[]string{"at '/metadata'", "'nmae' not allowed"}},
		{"a label value that is a number", bank, "Deployment", func(o map[string]any) {
			set(o, json.Number("1"), "spec", "template", "metadata", "labels", "tier")
		}, []string{"at '/spec/template/metadata/labels/tier'", "want string"}},
		{"an unknown top-level field", bank, "ConfigMap", func(o map[string]any) { o["datas"] = map[string]any{} },
			[]string{"at ''", "'datas' not allowed"}},
		{"Secret data not base64", bank, "Secret", func(o map[string]any) { o["data"] = map[string]any{"k": "not base64!"} },
			[]string{"at '/data/k'", "byte"}},
		{"TestRun parallelism is a string", kv, TestRunKind, func(o map[string]any) { set(o, "4", "spec", "parallelism") },
			[]string{"at '/spec/parallelism'", "want integer"}},
		{"TestRun without a script", kv, TestRunKind, func(o map[string]any) { delete(o["spec"].(map[string]any), "script") },
			[]string{"at '/spec'", "missing property 'script'"}},
		{"an unknown TestRun field", kv, TestRunKind, func(o map[string]any) { set(o, json.Number("2"), "spec", "paralelism") },
			[]string{"at '/spec'", "'paralelism' not allowed"}},
		{"a TestRun runner env var without a name", kv, TestRunKind, func(o map[string]any) {
			env := dig(o, "spec", "runner", "env").([]any)
			delete(env[0].(map[string]any), "name")
		}, []string{"at '/spec/runner/env/0'", "missing property 'name'"}},
		{"an unknown kind", bank, "Deployment", func(o map[string]any) { o["kind"] = "Deploymnet" },
			[]string{`no schema for kind "Deploymnet" of apiVersion "apps/v1"`}},
		{"an unknown apiVersion", kv, TestRunKind, func(o map[string]any) { o["apiVersion"] = "k6.io/v1" },
			[]string{`no schema for kind "TestRun" of apiVersion "k6.io/v1"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := firstOf(t, tt.docs, tt.kind)
			if err := s.validate(obj); err != nil {
				t.Fatalf("the unbroken %s: %v", tt.kind, err)
			}
			tt.corrupt(obj)
			err := s.validate(obj)
			if err == nil {
				t.Fatalf("the broken %s passed", tt.kind)
			}
			t.Logf("refused: %v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// TestValidateStreamNamesTheDocument: a broken document in a stream is
// named by its number, kind and name.
func TestValidateStreamNamesTheDocument(t *testing.T) {
	s := mustSchemas(t)
	doc := "# header\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\ndata: {a: b}\n" +
		"---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: two, selector: {}, template: {}}\n" +
		"---\napiVersion: v1\nkind: Pdo\nmetadata: {name: p}\n"
	err := s.validateStream([]byte(doc))
	if err == nil {
		t.Fatal("a broken stream passed")
	}
	for _, w := range []string{"document 2 (Deployment web)", "at '/spec/replicas'", `document 3 (Pdo p): no schema for kind "Pdo"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\nlacks %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "document 1") {
		t.Errorf("the good document is named: %v", err)
	}
}

func export(t *testing.T, sc *scenario.Scenario, o Options) []byte {
	t.Helper()
	m, err := Build(sc, o)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := m.YAML(header)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// exportDocs exports a catalog scenario with a results CA and returns
// its documents decoded.
func exportDocs(t *testing.T, file string) []map[string]any {
	t.Helper()
	sc, o := load(t, file)
	o.Parallelism, o.ResultsAddr, o.ResultsToken, o.ResultsCA = 2, "10.0.0.5:7000", "r", []byte(testCA)
	var out []map[string]any
	for _, d := range splitDocs(export(t, sc, o)) {
		obj, err := yamlObject(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, obj.(map[string]any))
	}
	return out
}

// firstOf returns a deep copy of the first document of kind.
func firstOf(t *testing.T, docs []map[string]any, kind string) map[string]any {
	t.Helper()
	for _, d := range docs {
		if d["kind"] == kind {
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := yamlObject(b)
			if err != nil {
				t.Fatal(err)
			}
			return obj.(map[string]any)
		}
	}
	t.Fatalf("no %s exported", kind)
	return nil
}

func container(o map[string]any) map[string]any {
	return dig(o, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
}

// set sets the value at a path of map keys and list indexes.
func set(obj map[string]any, v any, keys ...string) {
	var cur any = obj
	for i, k := range keys {
		last := i == len(keys)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[k] = v
				return
			}
			cur = c[k]
		case []any:
			n := 0
			for _, r := range k {
				n = n*10 + int(r-'0')
			}
			if last {
				c[n] = v
				return
			}
			cur = c[n]
		}
	}
}

func readFile(t *testing.T, f string) []byte {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
