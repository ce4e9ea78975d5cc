package k8s

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/chaosrun/chaosrun/faults"
	"github.com/chaosrun/chaosrun/scenario"
)

var update = flag.Bool("update", false, "rewrite the golden manifests in testdata/")

// testCA is a stand-in PEM: the export copies it, it does not parse it.
const testCA = "-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n"

// load reads a catalog scenario (or a k6 twin, k6/NAME.yaml) and the
// options to export it with.
func load(t *testing.T, name string) (*scenario.Scenario, Options) {
	t.Helper()
	file := filepath.Join("..", "..", "scenarios", name)
	sc, err := scenario.Load(file, scenario.Options{FaultStage: faults.StageOf})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var script []byte
	if sc.Workload.Script != "" {
		if script, err = os.ReadFile(filepath.Join("..", "..", "workloads", sc.Workload.Script)); err != nil {
			t.Fatal(err)
		}
	}
	return sc, Options{Image: "registry.example/chaosrun:test", K6Image: "registry.example/chaosrun-k6:test", Parallelism: 1,
		ToxiproxyToken: "toxi-token", Seed: 99, FaultDelay: 30 * time.Second, Script: script, ScenarioFile: raw}
}

const header = "chaosrun export k8s (golden test)"

func TestGolden(t *testing.T) {
	tests := []struct {
		file string
		opts func(*Options)
	}{
		{"bank-slow-vault.yaml", func(o *Options) {
			o.Parallelism, o.ResultsAddr, o.ResultsToken = 2, "harness.example:7000", "results-token"
		}},
		{"k6/kv-hot-key-flood.yaml", func(o *Options) {
			o.Parallelism, o.ResultsAddr, o.ResultsToken, o.ResultsCA = 4, "10.0.0.5:7000", "results-token", []byte(testCA)
			o.Namespace = "load-tests"
		}},
		// No outside receiver: the manifests' judge receives.
		{"bank-slow-vault.yaml#judge", func(o *Options) { o.Parallelism, o.ResultsToken = 3, "results-token" }},
		{"kv-slow-partition.yaml#judge", func(o *Options) { o.Parallelism, o.ResultsToken = 2, "results-token" }},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			file, variant, _ := strings.Cut(tt.file, "#")
			sc, o := load(t, file)
			tt.opts(&o)
			// Stand-ins for the files' contents, so that editing a script
			// does not change the golden manifests.
			if sc.Workload.Script != "" {
				o.Script = []byte("// the workload script, " + sc.Workload.Script + "\n")
			}
			o.ScenarioFile = []byte("# the scenario file, " + file + "\n")
			m, err := Build(sc, o)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.YAML(header)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.ReplaceAll(strings.TrimSuffix(file, ".yaml"), "/", "-")
			if variant != "" {
				name += "." + variant
			}
			path := filepath.Join("testdata", name+".k8s.yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("manifests differ from %s (go test -update rewrites it); got:\n%s", path, got)
			}
		})
	}
}

// TestCatalogRoundTrip exports every catalog scenario a cluster can run,
// decodes the YAML back into the typed objects, checks that they
// reference each other consistently, and writes them again unchanged.
func TestCatalogRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, o := load(t, filepath.Base(f))
			o.ResultsAddr, o.ResultsToken, o.ResultsTLS = "harness.example:7000", "r", true
			m, err := Build(sc, o)
			if hostFaults(sc) {
				if err == nil || !strings.Contains(err.Error(), "edge faults only") {
					t.Fatalf("a scenario with host faults: err = %v, want a refusal", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			doc, err := m.YAML(header)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Decode(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(back); err != nil {
				t.Fatalf("decoded manifests are inconsistent:\n%v", err)
			}
			again, err := back.YAML(header)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(doc, again) {
				t.Fatalf("decoding and writing again changed the manifests:\n%s", again)
			}
			instances := 0
			for _, name := range sc.StartOrder() {
				instances += max(sc.Services[name].Replicas, 1)
			}
			if len(back.Deployments) != instances+1 || len(back.Services) != instances+1 {
				t.Fatalf("%d Deployments, %d Services; want %d each (every instance and Toxiproxy)", len(back.Deployments), len(back.Services), instances+1)
			}
			if (back.Job != nil) != (len(sc.Faults) > 0) {
				t.Fatalf("fault job %v for %d faults", back.Job != nil, len(sc.Faults))
			}
			switch {
			case isNative(sc) && (back.LoadJob == nil || back.TestRun != nil || *back.LoadJob.Spec.Parallelism != 1):
				t.Fatalf("a native workload: load Job %v, TestRun %v", back.LoadJob != nil, back.TestRun != nil)
			case !isNative(sc) && (back.TestRun == nil || back.LoadJob != nil || back.TestRun.Spec.Parallelism != 1):
				t.Fatalf("a k6 workload: TestRun %v, load Job %v", back.TestRun != nil, back.LoadJob != nil)
			}
		})
	}
}

func hostFaults(sc *scenario.Scenario) bool {
	for _, f := range sc.Faults {
		if f.Host != "" {
			return true
		}
	}
	return false
}

// TestCheckFindsBrokenReferences breaks one reference at a time in good
// manifests: Check names each.
func TestCheckFindsBrokenReferences(t *testing.T) {
	sc, o := load(t, "k6/kv-hot-key-flood.yaml")
	o.ResultsAddr, o.ResultsToken, o.ResultsCA = "10.0.0.5:7000", "r", []byte(testCA)
	fresh := func() *Manifests {
		m, err := Build(sc, o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	deployment := func(m *Manifests, name string) *corev1.Container {
		for _, d := range m.Deployments {
			if d.Name == name {
				return &d.Spec.Template.Spec.Containers[0]
			}
		}
		t.Fatalf("no Deployment %s", name)
		return nil
	}
	tests := []struct {
		name    string
		corrupt func(m *Manifests)
		want    string
	}{
		{"a Service selects no pods", func(m *Manifests) { m.Services[1].Spec.Selector[labelName] = "gone" }, "matches 0 Deployments"},
		{"a Service targets a port the container lacks", func(m *Manifests) {
			m.Services[0].Spec.Ports[1].TargetPort.StrVal = "edge-99"
		}, `targets "edge-99"`},
		{"a dependency on a missing Service port", func(m *Manifests) {
			c := deployment(m, "kvdispatcher-0")
			for i, a := range c.Args {
				if strings.HasPrefix(a, "kvstore=") {
					c.Args[i] = strings.Replace(a, "toxiproxy:20003", "toxiproxy:29999", 1)
				}
			}
		}, "Service toxiproxy has no port 29999"},
		{"a proxy upstream names no Service", func(m *Manifests) {
			c := deployment(m, "toxiproxy")
			for i, a := range c.Args {
				if strings.HasSuffix(a, "=kvstore-2:8080") {
					c.Args[i] = strings.Replace(a, "kvstore-2", "kvstore-9", 1)
				}
			}
		}, `no Service "kvstore-9"`},
		{"a deployment's selector misses its pods", func(m *Manifests) { m.Deployments[2].Spec.Template.Labels[labelName] = "x" }, "selector does not match its pod labels"},
		{"the script key is gone", func(m *Manifests) { delete(m.ConfigMaps[1].Data, "kv.js") }, `no key "kv.js"`},
		{"the script ConfigMap is gone", func(m *Manifests) { m.TestRun.Spec.Script.ConfigMap.Name = "other" }, `no ConfigMap "other"`},
		{"a workload target names no Service", func(m *Manifests) {
			m.TestRun.Spec.Arguments = strings.Replace(m.TestRun.Spec.Arguments, "http://kvdispatcher-0:8080", "http://dispatcher:8080", 1)
		}, `no Service "dispatcher"`},
		{"the fault Job targets a proxy port, not the API", func(m *Manifests) {
			m.Job.Spec.Template.Spec.Containers[0].Args[3] = "http://toxiproxy:20000"
		}, "is not Service toxiproxy's api port"},
		{"the fault Job's scenario is not mounted", func(m *Manifests) {
			m.Job.Spec.Template.Spec.Containers[0].VolumeMounts[0].MountPath = "/elsewhere"
		}, "is not a key of a mounted ConfigMap"},
		{"a Secret key is missing", func(m *Manifests) { delete(m.Secret.StringData, ResultsTokenKey) }, `reads key "results-token"`},
		{"the CA is not mounted", func(m *Manifests) { m.TestRun.Spec.Runner.VolumeMounts = nil }, "K6_RESILIENCE_CA"},
		{"an object in another namespace", func(m *Manifests) { m.Services[2].Namespace = "default" }, `namespace "default"`},
		{"two Services with one name", func(m *Manifests) { m.Services[2].Name = m.Services[1].Name }, "two objects have this name"},
		{"no Secret", func(m *Manifests) { m.Secret = nil }, "are required"},
	}
	if err := Check(fresh()); err != nil {
		t.Fatalf("good manifests: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := fresh()
			tt.corrupt(m)
			err := Check(m)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestBuildRefuses(t *testing.T) {
	tests := []struct {
		name, file string
		opts       func(*Options)
		want       string
	}{
		{"parallelism 0", "bank-slow-vault.yaml", func(o *Options) { o.Parallelism = 0 }, "parallelism 0 out of range (allowed: 1 to 1000)"},
		{"parallelism too high", "bank-slow-vault.yaml", func(o *Options) { o.Parallelism = 5000 }, "parallelism 5000 out of range"},
		{"results address without port", "bank-slow-vault.yaml", func(o *Options) { o.ResultsAddr, o.ResultsToken = "harness", "t" }, "not HOST:PORT"},
		{"results address without token", "bank-slow-vault.yaml", func(o *Options) { o.ResultsAddr = "h:1" }, "needs the receiver's token"},
		{"TLS without an address", "bank-slow-vault.yaml", func(o *Options) { o.ResultsTLS = true }, "needs a results address"},
		{"bad namespace", "bank-slow-vault.yaml", func(o *Options) { o.Namespace = "Load_Tests" }, `namespace "Load_Tests"`},
		{"the cluster's own namespace", "bank-slow-vault.yaml", func(o *Options) { o.Namespace = "kube-system" }, `namespace "kube-system" is the cluster's own`},
		{"default", "bank-slow-vault.yaml", func(o *Options) { o.Namespace = "default" }, `would delete default`},
		{"host faults", "bank-outlier-pause.yaml", func(*Options) {}, "edge faults only, through Toxiproxy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, o := load(t, tt.file)
			tt.opts(&o)
			if _, err := Build(sc, o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"a kind the export does not write", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", `unexpected kind "Pod"`},
		{"a field the type does not have", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicaz: 1}\n", "replicaz"},
		{"not YAML", "apiVersion: [\n", "document 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte("# header\n---\n" + tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestCheckLoadJob breaks the native load's Indexed Job one way at a time:
// Check names each.
func TestCheckLoadJob(t *testing.T) {
	sc, o := load(t, "bank-slow-vault.yaml")
	o.Parallelism, o.ResultsAddr, o.ResultsToken, o.ResultsCA = 3, "10.0.0.5:7000", "r", []byte(testCA)
	fresh := func() *Manifests {
		m, err := Build(sc, o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	arg := func(m *Manifests, flag string) *string {
		args := m.LoadJob.Spec.Template.Spec.Containers[0].Args
		for i := range args {
			if args[i] == flag {
				return &args[i+1]
			}
		}
		t.Fatalf("no %s in %v", flag, args)
		return nil
	}
	two := int32(2)
	tests := []struct {
		name    string
		corrupt func(m *Manifests)
		want    string
	}{
		{"not Indexed", func(m *Manifests) { m.LoadJob.Spec.CompletionMode = nil }, "not an Indexed Job"},
		{"fewer Pods at once than shards", func(m *Manifests) { m.LoadJob.Spec.Parallelism = &two }, "completions and parallelism must be equal"},
		{"retried", func(m *Manifests) { m.LoadJob.Spec.BackoffLimit = nil }, "backoffLimit must be 0"},
		{"shards of another count", func(m *Manifests) { *arg(m, "--shard") = "$(JOB_COMPLETION_INDEX)/2" }, "does not split the load in 3"},
		{"a target names no Service", func(m *Manifests) { *arg(m, "--target") = "bank=http://bnak:8080" }, `no Service "bnak"`},
		{"the CA is not mounted", func(m *Manifests) {
			c := &m.LoadJob.Spec.Template.Spec.Containers[0]
			c.VolumeMounts = c.VolumeMounts[:1]
		}, "results CA"},
		{"the scenario is not mounted", func(m *Manifests) {
			m.LoadJob.Spec.Template.Spec.Containers[0].VolumeMounts[0].MountPath = "/elsewhere"
		}, "scenario: /etc/chaosrun/scenario/scenario.yaml is not a key of a mounted ConfigMap"},
		{"the token's key is gone", func(m *Manifests) { delete(m.Secret.StringData, ResultsTokenKey) }, `CHAOSRUN_RESULTS_TOKEN reads key "results-token"`},
		{"a TestRun besides", func(m *Manifests) { m.TestRun = &TestRun{} }, "one load"},
	}
	m := fresh()
	if err := Check(m); err != nil {
		t.Fatalf("good manifests: %v", err)
	}
	if got := *arg(m, "--results"); got != "tcp://10.0.0.5:7000?ca=%2Fetc%2Fchaosrun%2Fresults-ca%2Fca.pem" {
		t.Errorf("--results %s", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := fresh()
			tt.corrupt(m)
			if err := Check(m); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v, want an error with %q", err, tt.want)
			}
		})
	}
}
