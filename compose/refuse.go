package compose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/chaosrun/chaosrun/internal/workdir"
	"github.com/chaosrun/chaosrun/scenario"
)

// Refused lists what chaosrun refuses of a Compose project, and why, for
// documentation; every other key of the specification is honoured.
var Refused = []struct{ Key, Why string }{
	{"network_mode: host, service:NAME, container:NAME", "the service would share another network stack and reach its dependencies around the proxies chaosrun puts on every edge"},
	{"pid: host, ipc: host", "the service would share the host's processes or memory: a fault could reach past the test"},
	{"volumes: a bind mount outside the project's folder", "a run must not read or write the host's files beyond the project (a socket such as /var/run/docker.sock included)"},
	{"secrets/configs: external: true", "a Swarm-only source: a standalone engine has none to give"},
	{"secrets/configs: file: outside the project's folder", "as for bind mounts"},
	{"deploy.replicas: 0 (or scale: 0)", "a service that starts no container: leave it out with a profile instead"},
	{"include:", "its files would escape the import's checks: list the files in the scenario's compose: instead"},
	{"extends.file outside the project's folder, or with ${VAR}", "the files are checked before compose-go reads them"},
}

// refusals reports what the loaded project asks that chaosrun cannot
// honour, at the key in the file that says it.
func (ss *sources) refusals(proj *types.Project) scenario.Errors {
	var errs scenario.Errors
	for _, name := range ss.serviceOrder(proj) {
		errs = append(errs, ss.refuseService(name, proj.Services[name])...)
	}
	secrets, configs := map[string]types.FileObjectConfig{}, map[string]types.FileObjectConfig{}
	for k, v := range proj.Secrets {
		secrets[k] = types.FileObjectConfig(v)
	}
	for k, v := range proj.Configs {
		configs[k] = types.FileObjectConfig(v)
	}
	errs = append(errs, ss.refuseFiles("secrets", secretFiles(secrets))...)
	errs = append(errs, ss.refuseFiles("configs", secretFiles(configs))...)
	return errs
}

// secretFile is what a secret or config's source says, for refusals.
type secretFile struct {
	external bool
	file     string
}

func secretFiles(s map[string]types.FileObjectConfig) map[string]secretFile {
	out := map[string]secretFile{}
	for k, v := range s {
		out[k] = secretFile{external: bool(v.External), file: v.File}
	}
	return out
}

// refuseFiles refuses external secrets or configs (kind) and files outside
// the project's folder.
func (ss *sources) refuseFiles(kind string, m map[string]secretFile) scenario.Errors {
	var errs scenario.Errors
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f := m[n]
		switch {
		case f.external:
			errs = append(errs, ss.errAt(kind+"."+n+".external", "file:, environment: or content:",
				"external "+kind+" exist only in Swarm: a standalone engine has none to give", kind, n, "external"))
		case f.file != "" && !workdir.Within(ss.dir, f.file):
			errs = append(errs, ss.errAt(kind+"."+n+".file", "a file inside the project's folder",
				fmt.Sprintf("%s is outside the project's folder %s", f.file, ss.dir), kind, n, "file"))
		}
	}
	return errs
}

// refuseService refuses what one service asks that chaosrun cannot honour.
func (ss *sources) refuseService(name string, c types.ServiceConfig) scenario.Errors {
	var errs scenario.Errors
	bad := func(key, allowed, format string, args ...any) {
		path := append([]string{"services", name}, strings.Split(key, ".")...)
		errs = append(errs, ss.errAt("services."+name+"."+key, allowed, fmt.Sprintf(format, args...), path...))
	}
	if m := c.NetworkMode; m == "host" || strings.HasPrefix(m, "service:") || strings.HasPrefix(m, "container:") {
		bad("network_mode", "bridge, none, or networks:", "network_mode %q shares another network stack: the service would reach its dependencies around chaosrun's proxies", m)
	}
	if c.Pid == "host" {
		bad("pid", "the service's own (leave pid: out)", "pid: host shares the host's processes: a fault could reach past the test")
	}
	if c.Ipc == "host" {
		bad("ipc", "private, shareable, service:NAME", "ipc: host shares the host's memory: a fault could reach past the test")
	}
	for _, v := range c.Volumes {
		if v.Type == types.VolumeTypeBind && v.Source != "" && !workdir.Within(ss.dir, v.Source) {
			bad("volumes", "named volumes, tmpfs, or bind mounts inside the project's folder",
				"bind mount of %s is outside the project's folder %s: a run does not reach the host's files beyond the project", v.Source, ss.dir)
		}
	}
	if c.Deploy != nil && c.Deploy.Replicas != nil && *c.Deploy.Replicas == 0 || c.Deploy == nil && c.Scale != nil && *c.Scale == 0 {
		key := "deploy.replicas"
		if c.Deploy == nil {
			key = "scale"
		}
		bad(key, "1 or more; a profile leaves a service out", "0 replicas start no container: chaosrun runs every service the project enables")
	}
	return errs
}
