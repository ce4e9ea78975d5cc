package k8s

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The judge: a Job running `chaosrun judge` receive-only, with a Service
// the load's shards stream to and the fault Job reports to. The manifests
// carry it when no outside receiver is given (Options.ResultsAddr empty).
const (
	// JudgeName names the judge's Job and Service.
	JudgeName = "chaosrun-judge"
	// JudgeResultsPort receives the shards' results streams;
	// JudgeEventsPort the fault Job's events.
	JudgeResultsPort = 7000
	JudgeEventsPort  = 7001
	// judgeWait bounds the judge's wait for the first shard's hello.
	judgeWait = 10 * time.Minute
	// judgeMargin is how long past load's duration the shards have to end.
	judgeMargin = time.Minute
	resultsDir  = "/results"
)

// judgeAddr is where the shards stream to the manifests' judge.
func judgeAddr() string { return net.JoinHostPort(JudgeName, strconv.Itoa(JudgeResultsPort)) }

// judgeEventsURL is where the fault Job reports to the manifests' judge.
func judgeEventsURL() string {
	return "http://" + net.JoinHostPort(JudgeName, strconv.Itoa(JudgeEventsPort))
}

// judge adds the judge's Job and Service.
func (b *builder) judge() {
	labels := b.labels(JudgeName, "judge")
	c := corev1.Container{
		Name:  "judge",
		Image: b.o.Image,
		Args: []string{"judge", "--listen", "0.0.0.0:" + strconv.Itoa(JudgeResultsPort), "--events-listen", "0.0.0.0:" + strconv.Itoa(JudgeEventsPort),
			"--shards", strconv.Itoa(b.o.Parallelism), "--wait", judgeWait.String(), "--margin", judgeMargin.String(),
			"--out-dir", resultsDir, scenarioDir + "/" + ScenarioKey},
		Env: []corev1.EnvVar{secretEnv(ResultsTokenEnv, ResultsTokenKey)},
		Ports: []corev1.ContainerPort{{Name: "results", ContainerPort: JudgeResultsPort, Protocol: corev1.ProtocolTCP},
			{Name: "events", ContainerPort: JudgeEventsPort, Protocol: corev1.ProtocolTCP}},
		VolumeMounts: []corev1.VolumeMount{{Name: "scenario", MountPath: scenarioDir, ReadOnly: true}, {Name: "results", MountPath: resultsDir}},
	}
	never := int32(0)
	deadline := int64((judgeWait + b.sc.Workload.Duration.Std() + judgeMargin).Seconds()) + 60
	b.m.JudgeJob = &batchv1.Job{
		TypeMeta:   typeMeta("batch/v1", "Job"),
		ObjectMeta: b.meta(JudgeName, labels),
		Spec: batchv1.JobSpec{
			// A judge started again would have missed the streams.
			BackoffLimit:          &never,
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c},
					Volumes: []corev1.Volume{configMapVolume("scenario", ScenarioConfigMap),
						{Name: "results", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}},
			},
		},
	}
	s := &corev1.Service{TypeMeta: typeMeta("v1", "Service"), ObjectMeta: b.meta(JudgeName, labels),
		Spec: corev1.ServiceSpec{Selector: b.selector(JudgeName)}}
	for _, p := range c.Ports {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromString(p.Name), Protocol: corev1.ProtocolTCP})
	}
	b.m.JudgeService = s
}

// judge checks the judge: its Service selects its Pod and targets ports
// it names, it waits for as many shards as the load runs, and the load's
// results and the fault Job's reports reach its Service's ports.
func (c *checker) judge() {
	j, s := c.m.JudgeJob, c.m.JudgeService
	if (j == nil) != (s == nil) {
		c.bad("the judge's Job and Service go together")
		return
	}
	if j == nil {
		return
	}
	where := "Job/" + j.Name
	spec := &j.Spec.Template.Spec
	c.podSpec(where, spec)
	if !matches(s.Spec.Selector, j.Spec.Template.Labels) || len(s.Spec.Selector) == 0 {
		c.bad("Service/%s: its selector does not match the judge's pod", s.Name)
	}
	for _, p := range s.Spec.Ports {
		if len(spec.Containers) == 0 || !hasPort(spec.Containers[0].Ports, p.TargetPort.String()) {
			c.bad("Service/%s: port %s targets %q, which the judge's container does not name", s.Name, p.Name, p.TargetPort.String())
		}
	}
	shards := ""
	for _, ct := range spec.Containers {
		if n := len(ct.Args); n > 0 {
			c.file(where+" scenario", ct.Args[n-1], ct.VolumeMounts, spec.Volumes)
		}
		shards = argAfter(ct.Args, "--shards")
	}
	if want := c.parallelism(); shards != strconv.Itoa(want) {
		c.bad("%s: --shards %q, but the load runs %d shard(s)", where, shards, want)
	}
	for _, addr := range c.resultsAddrs() {
		c.address("the load's results", addr)
	}
	if c.m.Job != nil {
		for _, ct := range c.m.Job.Spec.Template.Spec.Containers {
			u, err := url.Parse(argAfter(ct.Args, "--report-to"))
			if err != nil || u.Host == "" {
				c.bad("Job/%s: does not report its events to the judge (--report-to)", c.m.Job.Name)
				continue
			}
			c.address("Job/"+c.m.Job.Name+" --report-to", u.Host)
		}
	}
}

// parallelism is how many shards the load runs.
func (c *checker) parallelism() int {
	if c.m.TestRun != nil {
		return int(c.m.TestRun.Spec.Parallelism)
	}
	if j := c.m.LoadJob; j != nil && j.Spec.Parallelism != nil {
		return int(*j.Spec.Parallelism)
	}
	return 0
}

// resultsAddrs are the addresses the load sends its results to.
func (c *checker) resultsAddrs() []string {
	var out []string
	if tr := c.m.TestRun; tr != nil {
		for _, f := range strings.Fields(tr.Spec.Arguments) {
			if rest, ok := strings.CutPrefix(f, "resilience=tcp://"); ok {
				out = append(out, rest)
			}
		}
	}
	if j := c.m.LoadJob; j != nil {
		for _, ct := range j.Spec.Template.Spec.Containers {
			if u, err := url.Parse(argAfter(ct.Args, "--results")); err == nil && u.Scheme == "tcp" {
				out = append(out, u.Host)
			}
		}
	}
	if len(out) == 0 {
		c.bad("the load sends its results nowhere, yet the manifests hold a judge")
	}
	return out
}

// argAfter is the argument after flag, "" when there is none.
func argAfter(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}
