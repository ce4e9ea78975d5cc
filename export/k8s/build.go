package k8s

import (
	"fmt"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/scenario"
	"github.com/chaosrun/chaosrun/workloads"
)

// Label keys of every object.
const (
	labelName     = "app.kubernetes.io/name"
	labelPart     = "app.kubernetes.io/part-of"
	labelRole     = "app.kubernetes.io/component"
	labelScenario = "chaosrun.io/scenario"
)

type builder struct {
	sc   *scenario.Scenario
	o    Options
	seed int64
	m    *Manifests
	// judging says the manifests carry the judge, which the load streams
	// to and the fault Job reports to.
	judging bool
}

func (b *builder) meta(name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: b.o.Namespace, Labels: labels}
}

// labels are an object's labels; role is the scenario's service, or
// "toxiproxy", "workload", "faults".
func (b *builder) labels(name, role string) map[string]string {
	l := map[string]string{labelPart: "chaosrun", labelScenario: b.sc.Name, labelRole: role}
	if name != "" {
		l[labelName] = name
	}
	return l
}

// selector picks the pods of one instance.
func (b *builder) selector(name string) map[string]string {
	return map[string]string{labelName: name, labelScenario: b.sc.Name}
}

func (b *builder) build() (*Manifests, error) {
	b.m = &Manifests{
		Namespace: &corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"),
			ObjectMeta: metav1.ObjectMeta{Name: b.o.Namespace, Labels: map[string]string{labelPart: "chaosrun", labelScenario: b.sc.Name}}},
	}
	b.secrets()
	b.configMaps()
	if b.judging {
		b.judge()
	}
	if addrs := b.services(); isNative(b.sc) {
		b.loadJob(addrs)
	} else if err := b.testRun(addrs); err != nil {
		return nil, err
	}
	b.faultJob()
	return b.m, nil
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func (b *builder) secrets() {
	data := map[string]string{ToxiproxyTokenKey: b.o.ToxiproxyToken}
	if b.o.ResultsAddr != "" {
		data[ResultsTokenKey] = b.o.ResultsToken
	}
	b.m.Secret = &corev1.Secret{TypeMeta: typeMeta("v1", "Secret"), ObjectMeta: b.meta(SecretName, b.labels("", "tokens")),
		Type: corev1.SecretTypeOpaque, StringData: data}
}

func (b *builder) configMaps() {
	cm := func(name, role, key string, value []byte) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: typeMeta("v1", "ConfigMap"), ObjectMeta: b.meta(name, b.labels("", role)),
			Data: map[string]string{key: string(value)}}
	}
	b.m.ConfigMaps = append(b.m.ConfigMaps, cm(ScenarioConfigMap, "faults", ScenarioKey, b.o.ScenarioFile))
	if !isNative(b.sc) {
		b.m.ConfigMaps = append(b.m.ConfigMaps, cm(ScriptConfigMap, "workload", path.Base(b.sc.Workload.Script), b.o.Script))
	}
	if len(b.o.ResultsCA) > 0 {
		b.m.ConfigMaps = append(b.m.ConfigMaps, cm(CAConfigMap, "workload", CAKey, b.o.ResultsCA))
	}
}

func secretEnv(name, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: SecretName}, Key: key}}}
}

// services adds Toxiproxy and every instance, and returns each service's
// instance addresses (Service name and port), in replica order.
func (b *builder) services() map[string][]string {
	sc := b.sc
	edges := sc.Edges()
	toxiArgs := []string{"serve", "toxiproxy", "--listen", "0.0.0.0:" + strconv.Itoa(ToxiproxyAPIPort), "--seed", strconv.FormatInt(b.seed, 10)}
	if sc.NeedsStage(scenario.StageHTTP) {
		toxiArgs = append(toxiArgs, "--http-stage")
	}
	toxiPorts := []corev1.ContainerPort{{Name: "api", ContainerPort: ToxiproxyAPIPort, Protocol: corev1.ProtocolTCP}}
	instPort := map[string]int{} // instance → its Service port
	addrs := map[string][]string{}
	deps := map[string]map[string][]string{} // service → dependency → proxy addresses
	for _, name := range sc.StartOrder() {
		svc := sc.Services[name]
		port := ServicePort
		if svc.Image != "" && svc.Port > 0 {
			port = svc.Port
		}
		for i := range max(svc.Replicas, 1) {
			inst := alias(sc.InstanceName(name, i))
			instPort[inst] = port
			addrs[name] = append(addrs[name], net.JoinHostPort(inst, strconv.Itoa(port)))
		}
	}
	for i, e := range edges {
		p := ProxyBasePort + i
		upstream := alias(sc.InstanceName(e.To, e.Replica))
		toxiArgs = append(toxiArgs, "--proxy", fmt.Sprintf("%s=0.0.0.0:%d=%s", e.Proxy, p, net.JoinHostPort(upstream, strconv.Itoa(instPort[upstream]))))
		toxiPorts = append(toxiPorts, corev1.ContainerPort{Name: edgePortName(i), ContainerPort: int32(p), Protocol: corev1.ProtocolTCP})
		if deps[e.From] == nil {
			deps[e.From] = map[string][]string{}
		}
		deps[e.From][e.To] = append(deps[e.From][e.To], net.JoinHostPort(ToxiproxyName, strconv.Itoa(p)))
	}
	toxi := corev1.Container{
		Name: ToxiproxyName, Image: b.o.Image, Args: toxiArgs, Ports: toxiPorts,
		Env:            []corev1.EnvVar{{Name: "GODEBUG", Value: "randseednop=0"}, secretEnv(guard.AdminTokenEnv, ToxiproxyTokenKey)},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("api")}}, PeriodSeconds: 2},
	}
	b.deploy(ToxiproxyName, ToxiproxyName, toxi)
	for _, name := range sc.StartOrder() {
		svc := sc.Services[name]
		for i := range max(svc.Replicas, 1) {
			inst := sc.InstanceName(name, i)
			b.deploy(alias(inst), name, b.container(inst, svc, instPort[alias(inst)], deps[name]))
		}
	}
	return addrs
}

// edgePortName names the port of edge i (port names have at most 15
// characters, so they cannot carry the edge's name).
func edgePortName(i int) string { return "edge-" + strconv.Itoa(i) }

// container is one instance: a reference target served by the chaosrun
// image (as `chaosrun serve` on the other testbeds), or the user's image,
// which learns its dependencies and config from the environment.
func (b *builder) container(inst string, svc *scenario.Service, port int, deps map[string][]string) corev1.Container {
	c := corev1.Container{
		Name:  alias(inst),
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port), Protocol: corev1.ProtocolTCP}},
	}
	health := svc.Health.Check
	if health == "" {
		health = "/healthz"
	}
	handler := corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: health, Port: intstr.FromString("http")}}
	if health == scenario.HealthTCP {
		handler = corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}
	}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: handler, PeriodSeconds: 2}
	depNames := make([]string, 0, len(deps))
	for d := range deps {
		depNames = append(depNames, d)
	}
	sort.Strings(depNames)
	keys := make([]string, 0, len(svc.Config))
	for k := range svc.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if svc.Image == "" {
		c.Image = b.o.Image
		c.Args = []string{"serve", svc.Run, "--listen", "0.0.0.0:" + strconv.Itoa(port)}
		for _, d := range depNames {
			c.Args = append(c.Args, "--dep", d+"="+strings.Join(deps[d], ","))
		}
		for _, k := range keys {
			c.Args = append(c.Args, "--"+k+"="+svc.Config[k])
		}
		return c
	}
	c.Image = svc.Image
	c.Env = []corev1.EnvVar{{Name: "CHAOSRUN_INSTANCE", Value: inst}, {Name: "CHAOSRUN_PORT", Value: strconv.Itoa(port)}}
	for _, d := range depNames {
		c.Env = append(c.Env, corev1.EnvVar{Name: "CHAOSRUN_DEP_" + envName(d), Value: strings.Join(deps[d], ",")})
	}
	for _, k := range keys {
		c.Env = append(c.Env, corev1.EnvVar{Name: "CHAOSRUN_CONFIG_" + envName(k), Value: svc.Config[k]})
	}
	return c
}

func envName(s string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(s))
}

// deploy adds a one-replica Deployment running c and a Service with c's
// ports, both named name.
func (b *builder) deploy(name, role string, c corev1.Container) {
	one := int32(1)
	d := &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: b.meta(name, b.labels(name, role)),
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: b.selector(name)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: b.labels(name, role)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{c}},
			},
		},
	}
	s := &corev1.Service{
		TypeMeta:   typeMeta("v1", "Service"),
		ObjectMeta: b.meta(name, b.labels(name, role)),
		Spec:       corev1.ServiceSpec{Selector: b.selector(name)},
	}
	for _, p := range c.Ports {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromString(p.Name), Protocol: corev1.ProtocolTCP})
	}
	b.m.Deployments = append(b.m.Deployments, d)
	b.m.Services = append(b.m.Services, s)
}

// testRun adds the workload: the script from its ConfigMap, the scenario's
// environment as -e flags (the same as a local run's, with the Services
// as targets) and the results output pointed at the harness.
func (b *builder) testRun(addrs map[string][]string) error {
	sc := b.sc
	env, err := workloads.ScriptEnv(sc, addrs, b.seed, sc.Workload.Duration.Std())
	if err != nil {
		return fmt.Errorf("export k8s: %w", err)
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var args []string
	for _, k := range keys {
		args = append(args, "-e", k+"="+env[k])
	}
	pod := Pod{Image: b.o.K6Image, Metadata: PodMetadata{Labels: b.labels("", "workload")}}
	if b.o.ResultsAddr != "" {
		args = append(args, "--out", "resilience=tcp://"+b.o.ResultsAddr)
		pod.Env = append(pod.Env, secretEnv("K6_RESILIENCE_TOKEN", ResultsTokenKey))
		switch {
		case len(b.o.ResultsCA) > 0:
			pod.Env = append(pod.Env, corev1.EnvVar{Name: "K6_RESILIENCE_CA", Value: caDir + "/" + CAKey})
			pod.Volumes = []corev1.Volume{{Name: "results-ca", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: CAConfigMap}}}}}
			pod.VolumeMounts = []corev1.VolumeMount{{Name: "results-ca", MountPath: caDir, ReadOnly: true}}
		case b.o.ResultsTLS:
			pod.Env = append(pod.Env, corev1.EnvVar{Name: "K6_RESILIENCE_TLS", Value: "true"})
		}
	}
	b.m.TestRun = &TestRun{
		TypeMeta:   typeMeta(TestRunAPIVersion, TestRunKind),
		ObjectMeta: b.meta(sc.Name, b.labels("", "workload")),
		Spec: TestRunSpec{
			Script:      K6Script{ConfigMap: &K6ConfigMap{Name: ScriptConfigMap, File: path.Base(sc.Workload.Script)}},
			Parallelism: int32(b.o.Parallelism),
			Arguments:   strings.Join(args, " "),
			Runner:      pod,
		},
	}
	return nil
}

// faultJob adds the Job that runs the fault schedule against Toxiproxy;
// none when the scenario has no faults.
func (b *builder) faultJob() {
	if len(b.sc.Faults) == 0 {
		return
	}
	var end int64
	for _, f := range b.sc.Faults {
		end = max(end, int64((f.Start.Std()+f.Duration.Std()).Seconds())+1)
	}
	deadline := int64((faultWait + b.o.FaultDelay).Seconds()) + end + 60
	never := int32(0)
	labels := b.labels(FaultJobName, "faults")
	c := corev1.Container{
		Name:  "faults",
		Image: b.o.Image,
		Args: []string{"fault", "apply", "--toxiproxy", fmt.Sprintf("http://%s:%d", ToxiproxyName, ToxiproxyAPIPort),
			"--delay", b.o.FaultDelay.String(), "--wait", faultWait.String(), scenarioDir + "/" + ScenarioKey},
		Env:          []corev1.EnvVar{secretEnv(guard.AdminTokenEnv, ToxiproxyTokenKey)},
		VolumeMounts: []corev1.VolumeMount{{Name: "scenario", MountPath: scenarioDir, ReadOnly: true}},
	}
	if b.judging {
		// The schedule counts from load's start at the judge, as a local
		// run's does, and the judge hears every event.
		c.Args = []string{"fault", "apply", "--toxiproxy", fmt.Sprintf("http://%s:%d", ToxiproxyName, ToxiproxyAPIPort),
			"--report-to", judgeEventsURL(), "--wait", (faultWait + judgeWait).String(), scenarioDir + "/" + ScenarioKey}
		c.Env = append(c.Env, secretEnv(ResultsTokenEnv, ResultsTokenKey))
		deadline += int64(judgeWait.Seconds())
	}
	b.m.Job = &batchv1.Job{
		TypeMeta:   typeMeta("batch/v1", "Job"),
		ObjectMeta: b.meta(FaultJobName, labels),
		Spec: batchv1.JobSpec{
			// A schedule run twice would apply its faults at the wrong times.
			BackoffLimit:          &never,
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{c},
					Volumes: []corev1.Volume{{Name: "scenario", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: ScenarioConfigMap}}}}},
				},
			},
		},
	}
}
