package k8s

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestJudgeInTheManifests: without an outside receiver, every catalog
// scenario a cluster can run — native (an Indexed Job of chaosrun load) and
// its k6 twins in scenarios/k6 (a k6-operator TestRun) — exports with a
// judge that waits for as many shards as the load runs, the load streaming
// to its Service and the fault Job reporting to it; the manifests decode
// back and hold together.
func TestJudgeInTheManifests(t *testing.T) {
	root := filepath.Join("..", "..", "scenarios")
	native, err := filepath.Glob(filepath.Join(root, "*.yaml"))
	k6, err2 := filepath.Glob(filepath.Join(root, "k6", "*.yaml"))
	if err != nil || err2 != nil || len(native) == 0 || len(k6) == 0 {
		t.Fatalf("no catalog: %v %v", err, err2)
	}
	testRuns := 0
	for _, f := range append(native, k6...) {
		name, _ := filepath.Rel(root, f)
		t.Run(name, func(t *testing.T) {
			sc, o := load(t, name)
			o.Parallelism, o.ResultsToken = 3, "r"
			if hostFaults(sc) {
				return
			}
			m, err := Build(sc, o)
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
			if back.JudgeJob == nil || back.JudgeService == nil {
				t.Fatal("no judge in the manifests")
			}
			if got := argAfter(back.JudgeJob.Spec.Template.Spec.Containers[0].Args, "--shards"); got != "3" {
				t.Errorf("the judge waits for %q shards, want 3", got)
			}
			if s := string(doc); !strings.Contains(s, "--shards\n") || !strings.Contains(s, judgeAddr()) {
				t.Errorf("the judge or the load's results address is missing:\n%s", s)
			}
			if strings.HasPrefix(name, "k6"+string(filepath.Separator)) {
				testRuns++
				checkTestRunToJudge(t, back)
			}
			if back.Job != nil && argAfter(back.Job.Spec.Template.Spec.Containers[0].Args, "--report-to") != judgeEventsURL() {
				t.Errorf("the fault Job does not report to the judge: %v", back.Job.Spec.Template.Spec.Containers[0].Args)
			}
		})
	}
	if testRuns == 0 {
		t.Error("no k6 scenario exported: the TestRun's wiring to the judge went unchecked")
	}
}

// checkTestRunToJudge checks that a k6 scenario's load is a TestRun of 3
// runners streaming to the judge with the results token.
func checkTestRunToJudge(t *testing.T, m *Manifests) {
	t.Helper()
	tr := m.TestRun
	if tr == nil || m.LoadJob != nil {
		t.Fatalf("a k6 scenario's load: TestRun %v, load Job %v; want a TestRun only", tr != nil, m.LoadJob != nil)
	}
	if tr.Spec.Parallelism != 3 {
		t.Errorf("TestRun parallelism %d, want the judge's 3", tr.Spec.Parallelism)
	}
	if out := argAfter(strings.Fields(tr.Spec.Arguments), "--out"); out != "resilience=tcp://"+judgeAddr() {
		t.Errorf("the TestRun's runners stream to %q, want resilience=tcp://%s", out, judgeAddr())
	}
	token := false
	for _, e := range tr.Spec.Runner.Env {
		token = token || e.Name == "K6_RESILIENCE_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
	}
	if !token {
		t.Errorf("the TestRun's runners get no K6_RESILIENCE_TOKEN from the Secret: %+v", tr.Spec.Runner.Env)
	}
}

// TestCheckJudge breaks the judge's wiring one way at a time: Check names
// each.
func TestCheckJudge(t *testing.T) {
	sc, o := load(t, "bank-slow-vault.yaml")
	o.Parallelism, o.ResultsToken = 3, "r"
	fresh := func() *Manifests {
		m, err := Build(sc, o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	set := func(args []string, flag, v string) {
		for i := range args {
			if args[i] == flag {
				args[i+1] = v
				return
			}
		}
		t.Fatalf("no %s in %v", flag, args)
	}
	tests := []struct {
		name    string
		corrupt func(m *Manifests)
		want    string
	}{
		{"waits for other shards", func(m *Manifests) { set(m.JudgeJob.Spec.Template.Spec.Containers[0].Args, "--shards", "2") }, `--shards "2", but the load runs 3`},
		{"the load streams elsewhere", func(m *Manifests) {
			set(m.LoadJob.Spec.Template.Spec.Containers[0].Args, "--results", "tcp://chaosrun-judge:7999")
		}, "Service chaosrun-judge has no port 7999"},
		{"the fault Job does not report", func(m *Manifests) {
			c := &m.Job.Spec.Template.Spec.Containers[0]
			set(c.Args, "--report-to", "")
		}, "does not report its events to the judge"},
		{"the Service misses the judge's pod", func(m *Manifests) { m.JudgeService.Spec.Selector[labelName] = "x" }, "does not match the judge's pod"},
		{"the Service targets an unnamed port", func(m *Manifests) { m.JudgeService.Spec.Ports[1].TargetPort.StrVal = "evnts" }, `targets "evnts"`},
		{"a Job without its Service", func(m *Manifests) { m.JudgeService = nil }, "go together"},
	}
	if err := Check(fresh()); err != nil {
		t.Fatalf("good manifests: %v", err)
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
