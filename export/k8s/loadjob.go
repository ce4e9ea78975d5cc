package k8s

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads/engine"
)

// The native load's Indexed Job.
const (
	// LoadJobName names the Job whose Pods run the native load's shards.
	LoadJobName = "chaosrun-load"
	// ResultsTokenEnv carries the results token to `chaosrun load`.
	ResultsTokenEnv = "CHAOSRUN_RESULTS_TOKEN"
	// noResults is where a load without a results address writes.
	noResults = "/dev/null"
)

// isNative reports whether the scenario's engine runs as an Indexed Job
// of `chaosrun load` shards (its registration says K8sJob) rather than a
// k6-operator TestRun.
func isNative(sc *scenario.Scenario) bool {
	e, err := engine.Of(sc)
	return err == nil && e.K8sJob
}

// loadJob adds the native load: an Indexed Job of Parallelism Pods, Pod i
// running shard i (`chaosrun load SCENARIO --shard $(JOB_COMPLETION_INDEX)/N`)
// against the Services, streaming to the results address.
func (b *builder) loadJob(addrs map[string][]string) {
	sc, n := b.sc, int32(b.o.Parallelism)
	args := []string{"load", scenarioDir + "/" + ScenarioKey, "--shard", fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", n),
		"--seed", strconv.FormatInt(b.seed, 10)}
	targets := append([]string(nil), sc.Workload.Targets...)
	sort.Strings(targets)
	for _, svc := range targets {
		urls := make([]string, len(addrs[svc]))
		for i, a := range addrs[svc] {
			urls[i] = "http://" + a
		}
		args = append(args, "--target", svc+"="+strings.Join(urls, ","))
	}
	c := corev1.Container{Name: "load", Image: b.o.Image,
		VolumeMounts: []corev1.VolumeMount{{Name: "scenario", MountPath: scenarioDir, ReadOnly: true}}}
	vols := []corev1.Volume{configMapVolume("scenario", ScenarioConfigMap)}
	dest := noResults
	if b.o.ResultsAddr != "" {
		q := url.Values{}
		switch {
		case len(b.o.ResultsCA) > 0:
			q.Set("ca", caDir+"/"+CAKey)
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "results-ca", MountPath: caDir, ReadOnly: true})
			vols = append(vols, configMapVolume("results-ca", CAConfigMap))
		case b.o.ResultsTLS:
			q.Set("tls", "true")
		}
		dest = "tcp://" + b.o.ResultsAddr
		if len(q) > 0 {
			dest += "?" + q.Encode()
		}
		c.Env = []corev1.EnvVar{secretEnv(ResultsTokenEnv, ResultsTokenKey)}
	}
	c.Args = append(args, "--results", dest)
	// A shard run twice would send its arrivals twice: no retries.
	never := int32(0)
	mode := batchv1.IndexedCompletion
	deadline := int64((faultWait + sc.Workload.Duration.Std()).Seconds()) + 60
	labels := b.labels(LoadJobName, "workload")
	b.m.LoadJob = &batchv1.Job{
		TypeMeta:   typeMeta("batch/v1", "Job"),
		ObjectMeta: b.meta(LoadJobName, labels),
		Spec: batchv1.JobSpec{
			CompletionMode:        &mode,
			Completions:           &n,
			Parallelism:           &n,
			BackoffLimit:          &never,
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c}, Volumes: vols},
			},
		},
	}
}

func configMapVolume(name, configMap string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}}
}

// loadJob checks the native load's Job: Indexed, one completion per Pod,
// never retried; its scenario (and CA) mounted, its shard argument N
// matching its parallelism, every --target URL naming a Service port.
func (c *checker) loadJob() {
	j := c.m.LoadJob
	if j == nil {
		return
	}
	where := "Job/" + j.Name
	s := &j.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		c.bad("%s: not an Indexed Job: its Pods would not know their shard", where)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 1 {
		c.bad("%s: completions and parallelism must be equal: every shard runs at once", where)
	}
	if s.BackoffLimit == nil || *s.BackoffLimit != 0 {
		c.bad("%s: backoffLimit must be 0: a shard run again would send its arrivals twice", where)
	}
	spec := &s.Template.Spec
	c.podSpec(where, spec)
	for _, ct := range spec.Containers {
		args := ct.Args
		if len(args) > 1 {
			c.file(where+" scenario", args[1], ct.VolumeMounts, spec.Volumes)
		}
		for i := 0; i+1 < len(args); i++ {
			switch args[i] {
			case "--shard":
				if s.Completions != nil && !strings.HasSuffix(args[i+1], "/"+strconv.Itoa(int(*s.Completions))) {
					c.bad("%s: --shard %s does not split the load in %d", where, args[i+1], *s.Completions)
				}
			case "--target":
				_, urls, _ := strings.Cut(args[i+1], "=")
				for _, raw := range strings.Split(urls, ",") {
					if u, err := url.Parse(raw); err != nil || u.Host == "" {
						c.bad("%s: --target %q is not SERVICE=URL", where, args[i+1])
					} else {
						c.address(where+" --target", u.Host)
					}
				}
			case "--results":
				if u, err := url.Parse(args[i+1]); err == nil && u.Query().Get("ca") != "" {
					c.file(where+" results CA", u.Query().Get("ca"), ct.VolumeMounts, spec.Volumes)
				}
			}
		}
	}
}
