// Package k8s writes Kubernetes manifests for a scenario: each service
// instance and Toxiproxy as a Deployment with a Service (every dependency
// reached through its Toxiproxy proxy, as on the other testbeds), the
// workload as an Indexed Job of `chaosrun load` shards (native) or a
// k6-operator TestRun (engine: k6), and a Job that applies the fault
// schedule through Toxiproxy's API (`chaosrun fault apply`). The objects
// are typed (k8s.io/api); Check verifies that they reference each other
// consistently.
package k8s

import (
	"errors"
	"fmt"
	"net"
	"path"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/chaosrun/chaosrun/scenario"
)

// Ports and names the manifests use.
const (
	// ServicePort is where `chaosrun serve` listens in its container.
	ServicePort = 8080
	// ToxiproxyAPIPort is Toxiproxy's API port.
	ToxiproxyAPIPort = 8474
	// ProxyBasePort is the first proxy port of Toxiproxy (one per edge, in
	// the scenario's edge order), as on the Docker testbed.
	ProxyBasePort = 20000

	// ToxiproxyName names Toxiproxy's Deployment and Service.
	ToxiproxyName = "toxiproxy"
	// SecretName is the Secret with the tokens.
	SecretName = "chaosrun-tokens"
	// ScenarioConfigMap holds the scenario file, for the fault Job.
	ScenarioConfigMap = "chaosrun-scenario"
	// ScriptConfigMap holds the workload script, for the TestRun.
	ScriptConfigMap = "chaosrun-workload"
	// CAConfigMap holds the CA the runners trust for the results stream.
	CAConfigMap = "chaosrun-results-ca"
	// FaultJobName names the Job that applies the fault schedule.
	FaultJobName = "chaosrun-faults"

	// ToxiproxyTokenKey and ResultsTokenKey are the Secret's keys;
	// ScenarioKey and CAKey the ConfigMaps'.
	ToxiproxyTokenKey = "toxiproxy-token"
	ResultsTokenKey   = "results-token"
	ScenarioKey       = "scenario.yaml"
	CAKey             = "ca.pem"

	scenarioDir = "/etc/chaosrun/scenario"
	caDir       = "/etc/chaosrun/results-ca"
	// MaxParallelism bounds --parallelism.
	MaxParallelism = 1000
	// faultWait is how long the fault Job waits for Toxiproxy.
	faultWait = 5 * time.Minute
)

// Options says what to export besides the scenario.
type Options struct {
	// Namespace holds every object; default "chaosrun-" + the scenario's name.
	Namespace string
	// Image is the chaosrun image (its entrypoint the chaosrun binary): it
	// serves the reference targets and Toxiproxy, runs the fault Job and
	// the native load's shards.
	Image string
	// K6Image is k6 built with xk6-resilience, for the TestRun's runners
	// (engine: k6 only).
	K6Image string
	// Parallelism is the number of load shards (1 to MaxParallelism):
	// Pods of the native load's Job, or k6 runners.
	Parallelism int
	// ResultsAddr is HOST:PORT of an outside results receiver (a judge or
	// a harness elsewhere); "" puts a judge in the manifests (JudgeJob).
	ResultsAddr string
	// ResultsToken is the receiver's token; required.
	ResultsToken string
	// ResultsTLS makes the runners connect with TLS (system roots).
	ResultsTLS bool
	// ResultsCA is a PEM CA the runners trust instead; implies TLS.
	ResultsCA []byte
	// ToxiproxyToken guards Toxiproxy's API.
	ToxiproxyToken string
	// Seed is used when the scenario has none.
	Seed int64
	// FaultDelay is the time from Toxiproxy being ready to the fault
	// schedule's zero.
	FaultDelay time.Duration
	// Script is the workload script's content (engine: k6); ScenarioFile
	// the scenario file's, for the fault Job and the native load.
	Script, ScenarioFile []byte
}

// Manifests are the typed objects of one export.
type Manifests struct {
	Namespace  *corev1.Namespace
	Secret     *corev1.Secret
	ConfigMaps []*corev1.ConfigMap
	// Deployments and Services: Toxiproxy's first, then one per instance.
	Deployments []*appsv1.Deployment
	Services    []*corev1.Service
	// LoadJob runs a native workload (an Indexed Job, one Pod per shard);
	// TestRun a k6 one. Exactly one of them is set.
	LoadJob *batchv1.Job
	TestRun *TestRun
	// Job applies the fault schedule; nil when the scenario has none.
	Job *batchv1.Job
	// JudgeJob runs `chaosrun judge` receive-only and JudgeService reaches
	// it; both nil when the results go to an outside receiver.
	JudgeJob     *batchv1.Job
	JudgeService *corev1.Service
}

// Build makes the manifests of a validated scenario, and checks them.
func Build(sc *scenario.Scenario, o Options) (*Manifests, error) {
	if o.Namespace == "" {
		o.Namespace = "chaosrun-" + sc.Name
	}
	// Without an outside receiver, the manifests' judge receives.
	judging := o.ResultsAddr == "" && !o.ResultsTLS && len(o.ResultsCA) == 0
	if judging {
		o.ResultsAddr = judgeAddr()
	}
	if err := errors.Join(checkOptions(o, isNative(sc)), checkScenario(sc)); err != nil {
		return nil, err
	}
	b := &builder{sc: sc, o: o, seed: sc.Seed, judging: judging}
	if b.seed == 0 {
		b.seed = o.Seed
	}
	m, err := b.build()
	if err != nil {
		return nil, err
	}
	if err := Check(m); err != nil {
		return nil, fmt.Errorf("export k8s: the manifests do not hold together (a bug): %w", err)
	}
	return m, nil
}

// clusterNamespaces are the namespaces a cluster comes with: never the
// export's, which it creates and deleting it deletes.
var clusterNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// checkOptions says what is wrong with the options for a native or a k6
// workload.
func checkOptions(o Options, native bool) error {
	var errs []error
	if o.Parallelism < 1 || o.Parallelism > MaxParallelism {
		errs = append(errs, fmt.Errorf("parallelism %d out of range (allowed: 1 to %d)", o.Parallelism, MaxParallelism))
	}
	if o.Image == "" || (o.K6Image == "" && !native) {
		errs = append(errs, errors.New("an image for chaosrun (and for engine: k6, one for k6) is required"))
	}
	for _, msg := range validation.IsDNS1123Label(o.Namespace) {
		errs = append(errs, fmt.Errorf("namespace %q: %s", o.Namespace, msg))
	}
	if slices.Contains(clusterNamespaces, o.Namespace) {
		errs = append(errs, fmt.Errorf("namespace %q is the cluster's own: the export holds a Namespace object, and `kubectl delete -f` of it would delete %s; "+
			"give the run a namespace of its own (the default is chaosrun-SCENARIO)", o.Namespace, o.Namespace))
	}
	if o.ResultsAddr != "" {
		if _, _, err := net.SplitHostPort(o.ResultsAddr); err != nil {
			errs = append(errs, fmt.Errorf("results address %q is not HOST:PORT", o.ResultsAddr))
		}
		if o.ResultsToken == "" {
			errs = append(errs, errors.New("a results address needs the receiver's token"))
		}
	} else if o.ResultsTLS || len(o.ResultsCA) > 0 {
		errs = append(errs, errors.New("TLS for the results stream needs a results address"))
	}
	if o.ToxiproxyToken == "" {
		errs = append(errs, errors.New("a token for Toxiproxy's API is required"))
	}
	if o.FaultDelay < 0 {
		errs = append(errs, fmt.Errorf("fault delay %s is negative", o.FaultDelay))
	}
	if len(o.ScenarioFile) == 0 || (len(o.Script) == 0 && !native) {
		errs = append(errs, errors.New("the scenario file (and for engine: k6, the workload script) are required"))
	}
	return errors.Join(errs...)
}

// checkScenario says what of the scenario a cluster cannot run.
func checkScenario(sc *scenario.Scenario) error {
	var errs []error
	names := map[string]string{ToxiproxyName: "Toxiproxy"}
	for _, svc := range sc.StartOrder() {
		s := sc.Services[svc]
		if s.Image == "" && len(s.Command) > 0 {
			errs = append(errs, fmt.Errorf("service %s: a command: runs only on the local testbed; give it image: (and port:) to export it", svc))
		}
		switch {
		case s.External != "":
			errs = append(errs, fmt.Errorf("service %s: an external: service is not exported (a cluster reaches it through its own network)", svc))
		case s.Imported != nil:
			errs = append(errs, fmt.Errorf("service %s: a Compose service is not exported yet", svc))
		case len(s.Env) > 0 || len(s.Health.Command) > 0 || s.Metrics != nil:
			errs = append(errs, fmt.Errorf("service %s: env:, a health command and metrics: are not exported yet", svc))
		}
		for i := range max(s.Replicas, 1) {
			inst := sc.InstanceName(svc, i)
			name := alias(inst)
			if other, dup := names[name]; dup {
				errs = append(errs, fmt.Errorf("service %s: instance %s would be named %s, like %s", svc, inst, name, other))
			}
			names[name] = inst
			for _, msg := range validation.IsDNS1035Label(name) {
				errs = append(errs, fmt.Errorf("service %s: instance %s: %q is not a Kubernetes Service name: %s", svc, inst, name, msg))
			}
		}
	}
	for _, f := range sc.Faults {
		if f.Host != "" {
			errs = append(errs, fmt.Errorf("fault %s: %s acts on containers; the export applies edge faults only, through Toxiproxy", f.Name, f.Kind))
		}
	}
	for k, v := range sc.Workload.Params {
		if strings.ContainsAny(v, " \t\n\"'") {
			errs = append(errs, fmt.Errorf("workload.params.%s: %q has a space or quote; the TestRun's arguments are split on spaces", k, v))
		}
	}
	if base := path.Base(sc.Workload.Script); !isNative(sc) && len(validation.IsConfigMapKey(base)) > 0 {
		errs = append(errs, fmt.Errorf("workload.script %q: %q is not a ConfigMap key", sc.Workload.Script, base))
	}
	for _, msg := range validation.IsDNS1123Subdomain(sc.Name) {
		errs = append(errs, fmt.Errorf("scenario name %q: %s", sc.Name, msg))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	return nil
}

// alias is an instance's object name ("ledger.1" → "ledger-1").
func alias(instance string) string { return strings.ReplaceAll(instance, ".", "-") }
