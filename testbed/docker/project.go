package docker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/testcontainers/testcontainers-go"

	"github.com/chaosrun/chaosrun/scenario"
)

// projectOf is the Compose project a service came from and its
// description there; ok is false for every other service.
func projectOf(svc *scenario.Service, name string) (*types.Project, types.ServiceConfig, bool) {
	if svc == nil || svc.Imported == nil {
		return nil, types.ServiceConfig{}, false
	}
	proj, ok := svc.Imported.Project.(*types.Project)
	if !ok || proj == nil {
		return nil, types.ServiceConfig{}, false
	}
	cfg, ok := proj.Services[name]
	return proj, cfg, ok
}

// composeExtras is what a Compose service's description adds to the
// container chaosrun creates for it: everything but its name, image,
// command, environment, ports and networks (which the testbed sets, the
// networks rewritten so that each dependency resolves to its edge).
type composeExtras struct {
	labels      map[string]string
	user        string
	workingDir  string
	hostname    string
	domainName  string
	stopSignal  string
	stopTimeout *int
	tty, stdin  bool
	health      *container.HealthConfig
	host        container.HostConfig
	restarts    bool // the engine restarts it when its process dies
}

// runVolumes maps a project's named volumes to the engine's volumes a
// run uses for them.
type runVolumes map[string]string

// newComposeExtras maps a Compose service onto the engine's container
// configuration, key by key, as docker compose up does. vols names the
// engine volume of each named volume the service mounts.
func newComposeExtras(proj *types.Project, cfg types.ServiceConfig, vols runVolumes) (composeExtras, error) {
	x := composeExtras{
		labels:     map[string]string{},
		user:       cfg.User,
		workingDir: cfg.WorkingDir,
		hostname:   cfg.Hostname,
		domainName: cfg.DomainName,
		stopSignal: cfg.StopSignal,
		tty:        cfg.Tty,
		stdin:      cfg.StdinOpen,
		health:     composeHealth(cfg.HealthCheck),
	}
	for k, v := range cfg.Labels {
		x.labels[k] = v
	}
	if cfg.StopGracePeriod != nil {
		secs := int(time.Duration(*cfg.StopGracePeriod).Seconds())
		x.stopTimeout = &secs
	}
	h := &x.host
	h.RestartPolicy, x.restarts = restartPolicy(cfg), hasRestartPolicy(cfg)
	h.CapAdd, h.CapDrop = cfg.CapAdd, cfg.CapDrop
	h.Privileged, h.ReadonlyRootfs, h.Init = cfg.Privileged, cfg.ReadOnly, cfg.Init
	h.ShmSize = int64(cfg.ShmSize)
	opts, masked, err := securityOpts(proj.WorkingDir, cfg.SecurityOpt)
	if err != nil {
		return composeExtras{}, fmt.Errorf("service %s: security_opt: %w", cfg.Name, err)
	}
	h.SecurityOpt, h.MaskedPaths = opts, masked
	h.ExtraHosts = cfg.ExtraHosts.AsList(":")
	sort.Strings(h.ExtraHosts) // a map in compose-go: a stable order here
	if h.DNS, err = dnsList(cfg.DNS); err != nil {
		return composeExtras{}, fmt.Errorf("service %s: dns: %w", cfg.Name, err)
	}
	if len(cfg.Sysctls) > 0 {
		h.Sysctls = map[string]string(cfg.Sysctls)
	}
	resources(cfg, &h.Resources)
	if len(cfg.Tmpfs) > 0 {
		h.Tmpfs = map[string]string{}
		for _, t := range cfg.Tmpfs {
			target, opts, _ := strings.Cut(t, ":")
			h.Tmpfs[target] = opts
		}
	}
	mounts, err := serviceMounts(proj, cfg, vols)
	if err != nil {
		return composeExtras{}, err
	}
	h.Mounts = mounts
	return x, nil
}

// restartPolicy is restart:, then deploy.restart_policy over it, as
// Compose applies them.
func restartPolicy(cfg types.ServiceConfig) container.RestartPolicy {
	var p container.RestartPolicy
	if cfg.Restart != "" {
		name, count, _ := strings.Cut(cfg.Restart, ":")
		p.Name = container.RestartPolicyMode(name)
		if count != "" {
			fmt.Sscanf(count, "%d", &p.MaximumRetryCount) //nolint:errcheck // compose-go validated it
		}
	}
	if cfg.Deploy != nil && cfg.Deploy.RestartPolicy != nil {
		rp := cfg.Deploy.RestartPolicy
		p = container.RestartPolicy{}
		switch rp.Condition {
		case "none", "no":
			p.Name = container.RestartPolicyDisabled
		case "on-failure":
			p.Name = container.RestartPolicyOnFailure
		case "any", "always":
			p.Name = container.RestartPolicyAlways
		case "unless-stopped":
			p.Name = container.RestartPolicyUnlessStopped
		}
		if rp.MaxAttempts != nil && p.Name == container.RestartPolicyOnFailure {
			p.MaximumRetryCount = int(*rp.MaxAttempts)
		}
	}
	return p
}

// HasRestartPolicy reports whether the engine restarts the service's
// container when its process dies (restart: always, unless-stopped or
// on-failure).
func hasRestartPolicy(cfg types.ServiceConfig) bool {
	switch restartPolicy(cfg).Name {
	case container.RestartPolicyAlways, container.RestartPolicyUnlessStopped, container.RestartPolicyOnFailure:
		return true
	}
	return false
}

// resources maps deploy.resources (limits and reservations), and the
// older mem_limit, cpus and pids_limit keys.
func resources(cfg types.ServiceConfig, r *container.Resources) {
	r.Memory, r.NanoCPUs = int64(cfg.MemLimit), int64(cfg.CPUS*1e9)
	if cfg.PidsLimit != 0 {
		r.PidsLimit = &cfg.PidsLimit
	}
	for name, u := range cfg.Ulimits {
		soft, hard := int64(u.Soft), int64(u.Hard)
		if u.Single != 0 {
			soft, hard = int64(u.Single), int64(u.Single)
		}
		r.Ulimits = append(r.Ulimits, &container.Ulimit{Name: name, Soft: soft, Hard: hard})
	}
	sort.Slice(r.Ulimits, func(i, j int) bool { return r.Ulimits[i].Name < r.Ulimits[j].Name })
	if cfg.Deploy == nil {
		return
	}
	if l := cfg.Deploy.Resources.Limits; l != nil {
		if l.MemoryBytes > 0 {
			r.Memory = int64(l.MemoryBytes)
		}
		if l.NanoCPUs > 0 {
			r.NanoCPUs = int64(l.NanoCPUs * 1e9) // in float32, as Compose
		}
		if l.Pids > 0 {
			r.PidsLimit = &l.Pids
		}
	}
	if res := cfg.Deploy.Resources.Reservations; res != nil && res.MemoryBytes > 0 {
		r.MemoryReservation = int64(res.MemoryBytes)
	}
}

// composeHealth is the engine's health check of a Compose healthcheck;
// nil when the service has none (the image's own then applies).
func composeHealth(hc *types.HealthCheckConfig) *container.HealthConfig {
	if hc == nil {
		return nil
	}
	if hc.Disable {
		return &container.HealthConfig{Test: []string{"NONE"}}
	}
	out := &container.HealthConfig{Test: []string(hc.Test)}
	if len(out.Test) > 0 && out.Test[0] != "CMD" && out.Test[0] != "CMD-SHELL" && out.Test[0] != "NONE" {
		out.Test = []string{"CMD-SHELL", strings.Join(out.Test, " ")}
	}
	if hc.Interval != nil {
		out.Interval = time.Duration(*hc.Interval)
	}
	if hc.Timeout != nil {
		out.Timeout = time.Duration(*hc.Timeout)
	}
	if hc.StartPeriod != nil {
		out.StartPeriod = time.Duration(*hc.StartPeriod)
	}
	if hc.Retries != nil {
		out.Retries = int(*hc.Retries)
	}
	return out
}

// serviceMounts are the service's volumes (named volumes as the run's
// own, bind mounts, tmpfs), secrets at /run/secrets/NAME and configs at
// /NAME (or their target), read-only, as Compose mounts file sources.
func serviceMounts(proj *types.Project, cfg types.ServiceConfig, vols runVolumes) ([]mount.Mount, error) {
	var out []mount.Mount
	for _, v := range cfg.Volumes {
		m := mount.Mount{Target: v.Target, ReadOnly: v.ReadOnly}
		switch v.Type {
		case types.VolumeTypeVolume:
			m.Type = mount.TypeVolume
			if v.Source != "" {
				name, ok := vols[v.Source]
				if !ok {
					return nil, fmt.Errorf("service %s: volume %s has no volume of the run", cfg.Name, v.Source)
				}
				m.Source = name
			}
			if v.Volume != nil {
				m.VolumeOptions = &mount.VolumeOptions{NoCopy: v.Volume.NoCopy, Subpath: v.Volume.Subpath}
			}
		case types.VolumeTypeBind:
			m.Type, m.Source = mount.TypeBind, v.Source
		case types.VolumeTypeTmpfs:
			m.Type = mount.TypeTmpfs
			if v.Tmpfs != nil {
				m.TmpfsOptions = &mount.TmpfsOptions{SizeBytes: int64(v.Tmpfs.Size), Mode: osMode(v.Tmpfs.Mode)}
			}
		default:
			return nil, fmt.Errorf("service %s: volume %s of type %q is not supported (volume, bind, tmpfs)", cfg.Name, v.Target, v.Type)
		}
		out = append(out, m)
	}
	for _, s := range cfg.Secrets {
		m, err := fileMount(cfg.Name, "secret", s.Source, s.Target, types.FileObjectConfig(proj.Secrets[s.Source]), "/run/secrets/")
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	for _, c := range cfg.Configs {
		m, err := fileMount(cfg.Name, "config", c.Source, c.Target, types.FileObjectConfig(proj.Configs[c.Source]), "/")
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// fileMount bind-mounts a secret's or config's file read-only where
// Compose puts it: its target, else dir + its name.
func fileMount(service, kind, source, target string, obj types.FileObjectConfig, dir string) (mount.Mount, error) {
	if obj.File == "" {
		return mount.Mount{}, fmt.Errorf("service %s: %s %s has no file: source (chaosrun mounts file sources only)", service, kind, source)
	}
	switch {
	case target == "":
		target = dir + source
	case !path.IsAbs(target):
		target = dir + target
	}
	return mount.Mount{Type: mount.TypeBind, Source: obj.File, Target: target, ReadOnly: true}, nil
}

// osMode is a tmpfs mode as the engine takes it.
func osMode(m uint32) os.FileMode { return os.FileMode(m) }

// dnsList is the service's dns: servers; an entry that is no IP address
// is an error, as in Compose.
func dnsList(l types.StringList) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range l {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("invalid DNS address %q", s)
		}
		out = append(out, a)
	}
	return out, nil
}

// securityOpts are security_opt as Compose passes them: a seccomp profile
// file (relative to the project's folder) sent as its JSON, and
// systempaths=unconfined as no masked paths.
func securityOpts(dir string, in []string) (opts, masked []string, err error) {
	for _, o := range in {
		key, val, _ := strings.Cut(strings.Replace(o, ":", "=", 1), "=")
		switch {
		case key == "systempaths" && val == "unconfined":
			masked = []string{}
		case key == "seccomp" && val != "unconfined" && val != "":
			file := val
			if !filepath.IsAbs(file) {
				file = filepath.Join(dir, file)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return nil, nil, fmt.Errorf("seccomp profile: %w", err)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, data); err != nil {
				return nil, nil, fmt.Errorf("seccomp profile %s: %w", file, err)
			}
			opts = append(opts, "seccomp="+buf.String())
		default:
			opts = append(opts, o)
		}
	}
	return opts, masked, nil
}

// applyCompose adds a Compose service's description to its container
// request: the run's labels win over the file's on a clash, and the
// file's health check replaces the one derived from the scenario.
func applyCompose(req *testcontainers.ContainerRequest, x *composeExtras) {
	labels := maps.Clone(x.labels)
	maps.Copy(labels, req.Labels)
	req.Labels = labels
	if x.hostname != "" {
		req.Hostname = x.hostname // compose-go: Testcontainers carries it
	}
	hostMod := req.HostConfigModifier
	req.HostConfigModifier = func(hc *container.HostConfig) {
		if hostMod != nil {
			hostMod(hc)
		}
		h := x.host
		hc.RestartPolicy, hc.CapAdd, hc.CapDrop = h.RestartPolicy, h.CapAdd, h.CapDrop
		hc.Privileged, hc.ReadonlyRootfs, hc.Init = h.Privileged, h.ReadonlyRootfs, h.Init
		hc.ShmSize, hc.SecurityOpt, hc.Sysctls = h.ShmSize, h.SecurityOpt, h.Sysctls
		hc.ExtraHosts = append(hc.ExtraHosts, h.ExtraHosts...)
		hc.DNS, hc.Tmpfs, hc.Mounts = h.DNS, h.Tmpfs, h.Mounts
		hc.Resources = h.Resources
	}
	cfgMod := req.ConfigModifier
	req.ConfigModifier = func(c *container.Config) {
		if cfgMod != nil {
			cfgMod(c)
		}
		c.User, c.WorkingDir, c.Domainname = x.user, x.workingDir, x.domainName
		c.StopSignal, c.StopTimeout = x.stopSignal, x.stopTimeout
		c.Tty, c.OpenStdin = x.tty, x.stdin
		if x.health != nil {
			c.Healthcheck = x.health
		}
	}
}
