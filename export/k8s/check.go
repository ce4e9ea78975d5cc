package k8s

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Check verifies that the manifests reference each other consistently:
// names are valid and in one namespace; every Service selects exactly one
// Deployment and targets ports its container names; every dependency
// address, Toxiproxy upstream, workload target and the fault Job's
// Toxiproxy URL name an existing Service and port; every ConfigMap, Secret
// and key that a pod reads exists. It returns every problem found.
func Check(m *Manifests) error {
	if m.Namespace == nil || m.Secret == nil || (m.TestRun == nil) == (m.LoadJob == nil) {
		return errors.New("the Namespace, the Secret and one load (the TestRun or the load Job) are required")
	}
	c := &checker{m: m, cms: map[string]*corev1.ConfigMap{}, svcs: map[string]*corev1.Service{}}
	c.names()
	c.deployments()
	c.services()
	c.wiring()
	c.testRun()
	c.loadJob()
	c.job()
	c.judge()
	return errors.Join(c.errs...)
}

type checker struct {
	m    *Manifests
	errs []error
	cms  map[string]*corev1.ConfigMap
	svcs map[string]*corev1.Service
}

func (c *checker) bad(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// names checks every object's name, namespace and uniqueness per kind.
func (c *checker) names() {
	m := c.m
	ns := m.Namespace.Name
	seen := map[string]bool{}
	check := func(kind string, meta metav1.ObjectMeta, dns1035 bool) {
		key := kind + "/" + meta.Name
		if seen[key] {
			c.bad("%s: two objects have this name", key)
		}
		seen[key] = true
		if meta.Namespace != ns {
			c.bad("%s: namespace %q, want %q", key, meta.Namespace, ns)
		}
		msgs := validation.IsDNS1123Subdomain(meta.Name)
		if dns1035 {
			msgs = validation.IsDNS1035Label(meta.Name)
		}
		for _, msg := range msgs {
			c.bad("%s: bad name: %s", key, msg)
		}
	}
	check("Secret", m.Secret.ObjectMeta, false)
	for _, cm := range m.ConfigMaps {
		check("ConfigMap", cm.ObjectMeta, false)
		c.cms[cm.Name] = cm
	}
	for _, d := range m.Deployments {
		check("Deployment", d.ObjectMeta, false)
	}
	for _, s := range m.Services {
		check("Service", s.ObjectMeta, true)
		c.svcs[s.Name] = s
	}
	if m.TestRun != nil {
		check("TestRun", m.TestRun.ObjectMeta, false)
	}
	if m.LoadJob != nil {
		check("Job", m.LoadJob.ObjectMeta, false)
	}
	if m.Job != nil {
		check("Job", m.Job.ObjectMeta, false)
	}
	if m.JudgeJob != nil && m.JudgeService != nil {
		check("Job", m.JudgeJob.ObjectMeta, false)
		check("Service", m.JudgeService.ObjectMeta, true)
		c.svcs[m.JudgeService.Name] = m.JudgeService
	}
}

// deployments checks selectors against pod labels, port names and probes.
func (c *checker) deployments() {
	for _, d := range c.m.Deployments {
		where := "Deployment/" + d.Name
		if d.Spec.Selector == nil || !matches(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
			c.bad("%s: its selector does not match its pod labels", where)
		}
		c.podSpec(where, &d.Spec.Template.Spec)
	}
}

// podSpec checks one pod: port names, probe ports, env and volume refs.
func (c *checker) podSpec(where string, spec *corev1.PodSpec) {
	if len(spec.Containers) == 0 {
		c.bad("%s: no container", where)
	}
	c.volumes(where, spec.Volumes)
	for _, ct := range spec.Containers {
		cw := where + " container " + ct.Name
		names := map[string]bool{}
		for _, p := range ct.Ports {
			for _, msg := range validation.IsValidPortName(p.Name) {
				c.bad("%s: port %q: %s", cw, p.Name, msg)
			}
			if names[p.Name] {
				c.bad("%s: port name %q used twice", cw, p.Name)
			}
			names[p.Name] = true
		}
		for _, pr := range []*corev1.Probe{ct.ReadinessProbe, ct.LivenessProbe} {
			if pr == nil {
				continue
			}
			var port string
			switch {
			case pr.HTTPGet != nil:
				port = pr.HTTPGet.Port.String()
			case pr.TCPSocket != nil:
				port = pr.TCPSocket.Port.String()
			}
			if port != "" && !hasPort(ct.Ports, port) {
				c.bad("%s: its probe's port %q is not one of its ports", cw, port)
			}
		}
		c.env(cw, ct.Env)
		c.mounts(cw, ct.VolumeMounts, spec.Volumes)
	}
}

// volumes checks that every ConfigMap volume names one that exists.
func (c *checker) volumes(where string, vols []corev1.Volume) {
	for _, v := range vols {
		if v.ConfigMap != nil && c.cms[v.ConfigMap.Name] == nil {
			c.bad("%s: volume %s: no ConfigMap %q", where, v.Name, v.ConfigMap.Name)
		}
	}
}

func (c *checker) mounts(where string, mounts []corev1.VolumeMount, vols []corev1.Volume) {
	for _, mt := range mounts {
		found := false
		for _, v := range vols {
			found = found || v.Name == mt.Name
		}
		if !found {
			c.bad("%s: mount %s: no such volume", where, mt.Name)
		}
	}
}

// env checks that every Secret key an environment variable reads exists.
func (c *checker) env(where string, env []corev1.EnvVar) {
	for _, e := range env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		if _, ok := c.m.Secret.StringData[ref.Key]; ref.Name != c.m.Secret.Name || !ok {
			c.bad("%s: %s reads key %q of Secret %q, which does not exist", where, e.Name, ref.Key, ref.Name)
		}
	}
}

// services checks that each Service selects exactly one Deployment and
// targets ports its container has.
func (c *checker) services() {
	for _, s := range c.m.Services {
		where := "Service/" + s.Name
		var picked []corev1.Container
		n := 0
		for _, d := range c.m.Deployments {
			if len(s.Spec.Selector) > 0 && matches(s.Spec.Selector, d.Spec.Template.Labels) {
				n++
				picked = d.Spec.Template.Spec.Containers
			}
		}
		if n != 1 {
			c.bad("%s: its selector matches %d Deployments' pods, want 1", where, n)
			continue
		}
		for _, p := range s.Spec.Ports {
			for _, msg := range validation.IsValidPortName(p.Name) {
				c.bad("%s: port %q: %s", where, p.Name, msg)
			}
			found := false
			for _, ct := range picked {
				found = found || hasPort(ct.Ports, p.TargetPort.String())
			}
			if !found {
				c.bad("%s: port %s targets %q, which its pods' container does not name", where, p.Name, p.TargetPort.String())
			}
		}
	}
}

// wiring checks the addresses in the services' arguments and environment:
// each --dep and CHAOSRUN_DEP_* address, and each Toxiproxy --proxy's
// listen port (its container's and Service's) and upstream.
func (c *checker) wiring() {
	for _, d := range c.m.Deployments {
		for _, ct := range d.Spec.Template.Spec.Containers {
			where := "Deployment/" + d.Name
			for i := 0; i+1 < len(ct.Args); i++ {
				switch ct.Args[i] {
				case "--dep":
					_, addrs, _ := strings.Cut(ct.Args[i+1], "=")
					for _, a := range strings.Split(addrs, ",") {
						c.address(where+" --dep", a)
					}
				case "--proxy":
					parts := strings.Split(ct.Args[i+1], "=")
					if len(parts) != 3 {
						c.bad("%s: --proxy %q is not NAME=LISTEN=UPSTREAM", where, ct.Args[i+1])
						continue
					}
					c.address(where+" --proxy "+parts[0]+" upstream", parts[2])
					_, port, _ := net.SplitHostPort(parts[1])
					if !hasPort(ct.Ports, port) {
						c.bad("%s: --proxy %s listens on port %s, which its container does not name", where, parts[0], port)
					}
					c.address(where+" --proxy "+parts[0]+" listen", net.JoinHostPort(d.Name, port))
				}
			}
			for _, e := range ct.Env {
				if strings.HasPrefix(e.Name, "CHAOSRUN_DEP_") {
					for _, a := range strings.Split(e.Value, ",") {
						c.address(where+" "+e.Name, a)
					}
				}
			}
		}
	}
}

// address checks that host:port names a Service and one of its ports.
func (c *checker) address(where, addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		c.bad("%s: %q is not HOST:PORT", where, addr)
		return
	}
	s := c.svcs[host]
	if s == nil {
		c.bad("%s: %s: no Service %q", where, addr, host)
		return
	}
	for _, p := range s.Spec.Ports {
		if strconv.Itoa(int(p.Port)) == port {
			return
		}
	}
	c.bad("%s: %s: Service %s has no port %s", where, addr, host, port)
}

// testRun checks the script's ConfigMap and key, the targets in its
// arguments, and what its runners read.
func (c *checker) testRun() {
	tr := c.m.TestRun
	if tr == nil {
		return
	}
	where := "TestRun/" + tr.Name
	if tr.APIVersion != TestRunAPIVersion || tr.Kind != TestRunKind {
		c.bad("%s: apiVersion %q kind %q, want %s %s", where, tr.APIVersion, tr.Kind, TestRunAPIVersion, TestRunKind)
	}
	if tr.Spec.Parallelism < 1 {
		c.bad("%s: parallelism %d", where, tr.Spec.Parallelism)
	}
	switch ref := tr.Spec.Script.ConfigMap; {
	case ref == nil:
		c.bad("%s: the script is not in a ConfigMap", where)
	case c.cms[ref.Name] == nil:
		c.bad("%s: no ConfigMap %q for the script", where, ref.Name)
	default:
		if _, ok := c.cms[ref.Name].Data[ref.File]; !ok {
			c.bad("%s: ConfigMap %s has no key %q (the script)", where, ref.Name, ref.File)
		}
	}
	args := strings.Fields(tr.Spec.Arguments)
	for i := 0; i+1 < len(args); i++ {
		k, v, _ := strings.Cut(args[i+1], "=")
		if args[i] != "-e" || (!strings.HasPrefix(k, "TARGET_") && !strings.HasPrefix(k, "TARGETS_")) {
			continue
		}
		for _, raw := range strings.Split(v, ",") {
			u, err := url.Parse(raw)
			if err != nil || u.Host == "" {
				c.bad("%s: %s: %q is not a URL", where, k, raw)
				continue
			}
			c.address(where+" "+k, u.Host)
		}
	}
	c.volumes(where+" runner", tr.Spec.Runner.Volumes)
	c.mounts(where+" runner", tr.Spec.Runner.VolumeMounts, tr.Spec.Runner.Volumes)
	c.env(where+" runner", tr.Spec.Runner.Env)
	for _, e := range tr.Spec.Runner.Env {
		if e.Name == "K6_RESILIENCE_CA" {
			c.file(where+" runner K6_RESILIENCE_CA", e.Value, tr.Spec.Runner.VolumeMounts, tr.Spec.Runner.Volumes)
		}
	}
}

// job checks the fault Job: its Toxiproxy URL names the toxiproxy
// Service's API port, and the scenario file it reads is mounted.
func (c *checker) job() {
	j := c.m.Job
	if j == nil {
		return
	}
	where := "Job/" + j.Name
	spec := &j.Spec.Template.Spec
	c.podSpec(where, spec)
	if spec.RestartPolicy != corev1.RestartPolicyNever && spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		c.bad("%s: restartPolicy %q", where, spec.RestartPolicy)
	}
	for _, ct := range spec.Containers {
		args := ct.Args
		for i := 0; i+1 < len(args); i++ {
			if args[i] != "--toxiproxy" {
				continue
			}
			u, err := url.Parse(args[i+1])
			if err != nil || u.Host == "" {
				c.bad("%s: --toxiproxy %q is not a URL", where, args[i+1])
				continue
			}
			c.address(where+" --toxiproxy", u.Host)
			if s := c.svcs[u.Hostname()]; s != nil {
				api := false
				for _, p := range s.Spec.Ports {
					api = api || (p.Name == "api" && strconv.Itoa(int(p.Port)) == u.Port())
				}
				if !api {
					c.bad("%s: --toxiproxy %s is not Service %s's api port", where, args[i+1], s.Name)
				}
			}
		}
		if n := len(args); n > 0 {
			c.file(where+" scenario", args[n-1], ct.VolumeMounts, spec.Volumes)
		}
	}
}

// file checks that a path lies in a mounted ConfigMap that has its key.
func (c *checker) file(where, p string, mounts []corev1.VolumeMount, vols []corev1.Volume) {
	dir, key := path.Split(p)
	for _, mt := range mounts {
		if strings.TrimSuffix(dir, "/") != strings.TrimSuffix(mt.MountPath, "/") {
			continue
		}
		for _, v := range vols {
			if v.Name != mt.Name || v.ConfigMap == nil {
				continue
			}
			if cm := c.cms[v.ConfigMap.Name]; cm != nil {
				if _, ok := cm.Data[key]; ok {
					return
				}
			}
		}
	}
	c.bad("%s: %s is not a key of a mounted ConfigMap", where, p)
}

// matches reports whether every selector label is among labels.
func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// hasPort reports whether port (a name or a number) is among ports.
func hasPort(ports []corev1.ContainerPort, port string) bool {
	for _, p := range ports {
		if p.Name == port || strconv.Itoa(int(p.ContainerPort)) == port {
			return true
		}
	}
	return false
}
