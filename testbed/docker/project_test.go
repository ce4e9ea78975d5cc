package docker

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
)

// loadComposeSnippet loads a Compose file as the compose package does
// (project folder = a temporary folder holding files, so file sources
// resolve to absolute paths there) and returns the project and its folder.
func loadComposeSnippet(t *testing.T, yml string, files map[string]string) (*types.Project, string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "compose.yaml")
	if err := os.WriteFile(file, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	details := types.ConfigDetails{
		WorkingDir:  dir,
		ConfigFiles: []types.ConfigFile{{Filename: file, Content: []byte(yml)}},
		Environment: types.NewMapping(nil),
	}
	proj, err := loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("extras", true)
		o.SkipInclude = true
		o.SkipResolveEnvironment = true
		o.ResourceLoaders = nil
	})
	if err != nil {
		t.Fatalf("loading the snippet: %v\n%s", err, yml)
	}
	return proj, dir
}

// mnt is the part of a mount a row checks.
type mnt struct {
	Type     mount.Type
	Source   string
	Target   string
	ReadOnly bool
	Tmpfs    *mount.TmpfsOptions
}

func mountsOf(x composeExtras) []mnt {
	var out []mnt
	for _, m := range x.host.Mounts {
		out = append(out, mnt{Type: m.Type, Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly, Tmpfs: m.TmpfsOptions})
	}
	return out
}

func ulimitsOf(x composeExtras) []container.Ulimit {
	var out []container.Ulimit
	for _, u := range x.host.Resources.Ulimits {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func pids(x composeExtras) any {
	if x.host.Resources.PidsLimit == nil {
		return nil
	}
	return *x.host.Resources.PidsLimit
}

func svc(body string) string { return "services:\n  svc:\n    image: alpine\n" + body }

func TestComposeExtras(t *testing.T) {
	const (
		mi = 1 << 20
	)
	ninety := 90
	type row struct {
		name  string
		yml   string
		files map[string]string
		get   func(x composeExtras, cfg types.ServiceConfig) any
		want  any                  // expected value of get
		wantD func(dir string) any // or, when it depends on the project folder
		err   string               // or, an error mentioning this
	}
	restart := func(x composeExtras, _ types.ServiceConfig) any { return x.host.RestartPolicy }
	restarts := func(x composeExtras, _ types.ServiceConfig) any { return x.restarts }
	labels := func(x composeExtras, _ types.ServiceConfig) any { return x.labels }
	res := func(x composeExtras, _ types.ServiceConfig) any { return x.host.Resources }
	mounts := func(x composeExtras, _ types.ServiceConfig) any { return mountsOf(x) }
	health := func(x composeExtras, _ types.ServiceConfig) any { return x.health }
	rows := []row{
		// restart:
		{name: "restart no", yml: svc("    restart: \"no\"\n"), get: restart, want: container.RestartPolicy{Name: container.RestartPolicyDisabled}},
		{name: "restart always", yml: svc("    restart: always\n"), get: restart, want: container.RestartPolicy{Name: container.RestartPolicyAlways}},
		{name: "restart unless-stopped", yml: svc("    restart: unless-stopped\n"), get: restart, want: container.RestartPolicy{Name: container.RestartPolicyUnlessStopped}},
		{name: "restart on-failure:3", yml: svc("    restart: on-failure:3\n"), get: restart, want: container.RestartPolicy{Name: container.RestartPolicyOnFailure, MaximumRetryCount: 3}},
		{name: "no restart key", yml: svc(""), get: restart, want: container.RestartPolicy{}},
		// deploy.restart_policy
		{name: "deploy restart_policy none", yml: svc("    deploy:\n      restart_policy:\n        condition: none\n"), get: restart, want: container.RestartPolicy{Name: container.RestartPolicyDisabled}},
		{name: "deploy restart_policy on-failure max_attempts", yml: svc("    deploy:\n      restart_policy:\n        condition: on-failure\n        max_attempts: 5\n"), get: restart, want: container.RestartPolicy{Name: container.RestartPolicyOnFailure, MaximumRetryCount: 5}},
		{name: "deploy restart_policy any", yml: svc("    deploy:\n      restart_policy:\n        condition: any\n"), get: restart, want: container.RestartPolicy{Name: container.RestartPolicyAlways}},
		// docker compose (pkg/compose/create.go getRestartPolicy): deploy.restart_policy overrides restart:
		{name: "deploy restart_policy wins over restart", yml: svc("    restart: always\n    deploy:\n      restart_policy:\n        condition: on-failure\n        max_attempts: 2\n"), get: restart, want: container.RestartPolicy{Name: container.RestartPolicyOnFailure, MaximumRetryCount: 2}},
		// hasRestartPolicy
		{name: "restarts: restart no", yml: svc("    restart: \"no\"\n"), get: restarts, want: false},
		{name: "restarts: restart unless-stopped", yml: svc("    restart: unless-stopped\n"), get: restarts, want: true},
		{name: "restarts: deploy on-failure", yml: svc("    deploy:\n      restart_policy:\n        condition: on-failure\n"), get: restarts, want: true},
		{name: "restarts: deploy none", yml: svc("    deploy:\n      restart_policy:\n        condition: none\n"), get: restarts, want: false},
		{name: "hasRestartPolicy always", yml: svc("    restart: always\n"), get: func(_ composeExtras, cfg types.ServiceConfig) any { return hasRestartPolicy(cfg) }, want: true},
		{name: "hasRestartPolicy none", yml: svc(""), get: func(_ composeExtras, cfg types.ServiceConfig) any { return hasRestartPolicy(cfg) }, want: false},
		// labels
		{name: "labels list", yml: svc("    labels:\n      - com.example.team=payments\n      - tier=backend\n"), get: labels, want: map[string]string{"com.example.team": "payments", "tier": "backend"}},
		{name: "labels map", yml: svc("    labels:\n      com.example.team: payments\n      tier: \"backend\"\n"), get: labels, want: map[string]string{"com.example.team": "payments", "tier": "backend"}},
		// container config
		{name: "user", yml: svc("    user: \"1000:1000\"\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.user }, want: "1000:1000"},
		{name: "working_dir", yml: svc("    working_dir: /srv/app\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.workingDir }, want: "/srv/app"},
		{name: "hostname", yml: svc("    hostname: api-1\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.hostname }, want: "api-1"},
		{name: "domainname", yml: svc("    domainname: example.internal\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.domainName }, want: "example.internal"},
		{name: "stop_grace_period", yml: svc("    stop_grace_period: 1m30s\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.stopTimeout }, want: &ninety},
		// docker compose ToSeconds truncates: int(d.Seconds())
		{name: "stop_grace_period fraction", yml: svc("    stop_grace_period: 1500ms\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return *x.stopTimeout }, want: 1},
		{name: "stop_signal", yml: svc("    stop_signal: SIGINT\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.stopSignal }, want: "SIGINT"},
		{name: "tty", yml: svc("    tty: true\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.tty }, want: true},
		{name: "stdin_open", yml: svc("    stdin_open: true\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.stdin }, want: true},
		// host config
		{name: "cap_add", yml: svc("    cap_add:\n      - NET_ADMIN\n      - SYS_TIME\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.CapAdd }, want: []string{"NET_ADMIN", "SYS_TIME"}},
		{name: "cap_drop", yml: svc("    cap_drop:\n      - ALL\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.CapDrop }, want: []string{"ALL"}},
		{name: "privileged", yml: svc("    privileged: true\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Privileged }, want: true},
		{name: "read_only", yml: svc("    read_only: true\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.ReadonlyRootfs }, want: true},
		{name: "init", yml: svc("    init: true\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return *x.host.Init }, want: true},
		{name: "shm_size", yml: svc("    shm_size: \"64m\"\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.ShmSize }, want: int64(64 * mi)},
		{name: "security_opt", yml: svc("    security_opt:\n      - no-new-privileges:true\n      - label:disable\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.SecurityOpt }, want: []string{"no-new-privileges:true", "label:disable"}},
		// docker compose (parseSecurityOpts) reads a seccomp profile file and sends its JSON inline
		{name: "security_opt seccomp file", yml: svc("    security_opt:\n      - seccomp:./seccomp.json\n"), files: map[string]string{"seccomp.json": "{\n  \"defaultAction\": \"SCMP_ACT_ALLOW\"\n}\n"},
			get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.SecurityOpt }, want: []string{`seccomp={"defaultAction":"SCMP_ACT_ALLOW"}`}},
		{name: "extra_hosts list", yml: svc("    extra_hosts:\n      - \"db.local:10.0.0.5\"\n      - \"cache.local=10.0.0.6\"\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.ExtraHosts }, want: []string{"cache.local:10.0.0.6", "db.local:10.0.0.5"}},
		{name: "extra_hosts map", yml: svc("    extra_hosts:\n      db.local: 10.0.0.5\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.ExtraHosts }, want: []string{"db.local:10.0.0.5"}},
		{name: "dns", yml: svc("    dns:\n      - 8.8.8.8\n      - 2001:4860:4860::8888\n"), get: func(x composeExtras, _ types.ServiceConfig) any {
			var out []string
			for _, a := range x.host.DNS {
				out = append(out, a.String())
			}
			return out
		}, want: []string{"8.8.8.8", "2001:4860:4860::8888"}},
		{name: "dns single string", yml: svc("    dns: 1.1.1.1\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return len(x.host.DNS) }, want: 1},
		// docker compose fails "invalid DNS address" instead of dropping it
		{name: "dns not an address", yml: svc("    dns:\n      - dns.example.com\n"), err: "dns.example.com"},
		{name: "sysctls map", yml: svc("    sysctls:\n      net.core.somaxconn: 1024\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Sysctls }, want: map[string]string{"net.core.somaxconn": "1024"}},
		{name: "sysctls list", yml: svc("    sysctls:\n      - net.ipv4.tcp_syncookies=0\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Sysctls }, want: map[string]string{"net.ipv4.tcp_syncookies": "0"}},
		// resources
		{name: "mem_limit", yml: svc("    mem_limit: 512m\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Resources.Memory }, want: int64(512 * mi)},
		{name: "cpus", yml: svc("    cpus: 1.5\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Resources.NanoCPUs }, want: int64(1.5e9)},
		{name: "pids_limit", yml: svc("    pids_limit: 100\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return pids(x) }, want: int64(100)},
		{name: "ulimits single", yml: svc("    ulimits:\n      nproc: 65535\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return ulimitsOf(x) }, want: []container.Ulimit{{Name: "nproc", Soft: 65535, Hard: 65535}}},
		{name: "ulimits soft/hard", yml: svc("    ulimits:\n      nproc: 512\n      nofile:\n        soft: 20000\n        hard: 40000\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return ulimitsOf(x) },
			want: []container.Ulimit{{Name: "nofile", Soft: 20000, Hard: 40000}, {Name: "nproc", Soft: 512, Hard: 512}}},
		{name: "deploy limits cpus", yml: svc("    deploy:\n      resources:\n        limits:\n          cpus: \"0.5\"\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Resources.NanoCPUs }, want: int64(5e8)},
		// docker compose computes limits.NanoCPUs * 1e9 in float32
		{name: "deploy limits cpus 0.1", yml: svc("    deploy:\n      resources:\n        limits:\n          cpus: \"0.1\"\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Resources.NanoCPUs }, want: int64(1e8)},
		{name: "deploy limits memory", yml: svc("    deploy:\n      resources:\n        limits:\n          memory: 256M\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Resources.Memory }, want: int64(256 * mi)},
		{name: "deploy limits pids", yml: svc("    deploy:\n      resources:\n        limits:\n          pids: 64\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return pids(x) }, want: int64(64)},
		{name: "deploy reservations memory", yml: svc("    deploy:\n      resources:\n        reservations:\n          memory: 128M\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Resources.MemoryReservation }, want: int64(128 * mi)},
		{name: "no resources", yml: svc(""), get: res, want: container.Resources{}},
		// tmpfs
		{name: "tmpfs string", yml: svc("    tmpfs: /run\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Tmpfs }, want: map[string]string{"/run": ""}},
		{name: "tmpfs list", yml: svc("    tmpfs:\n      - /run:size=64m,mode=1777\n      - /tmp\n"), get: func(x composeExtras, _ types.ServiceConfig) any { return x.host.Tmpfs }, want: map[string]string{"/run": "size=64m,mode=1777", "/tmp": ""}},
		// volumes
		{name: "named volume", yml: svc("    volumes:\n      - data:/var/lib/data\n") + "volumes:\n  data: {}\n", get: mounts,
			want: []mnt{{Type: mount.TypeVolume, Source: "chaosrun-RUN-data", Target: "/var/lib/data"}}},
		{name: "named volume read-only", yml: svc("    volumes:\n      - data:/var/lib/data:ro\n") + "volumes:\n  data: {}\n", get: mounts,
			want: []mnt{{Type: mount.TypeVolume, Source: "chaosrun-RUN-data", Target: "/var/lib/data", ReadOnly: true}}},
		{name: "named volume long form", yml: svc("    volumes:\n      - type: volume\n        source: data\n        target: /data\n        read_only: true\n") + "volumes:\n  data: {}\n", get: mounts,
			want: []mnt{{Type: mount.TypeVolume, Source: "chaosrun-RUN-data", Target: "/data", ReadOnly: true}}},
		{name: "named volume not a run volume", yml: svc("    volumes:\n      - cache:/cache\n") + "volumes:\n  cache: {}\n", err: "cache"},
		{name: "anonymous volume", yml: svc("    volumes:\n      - /scratch\n"), get: mounts, want: []mnt{{Type: mount.TypeVolume, Target: "/scratch"}}},
		{name: "bind relative", yml: svc("    volumes:\n      - ./conf:/etc/app:ro\n"), get: mounts,
			wantD: func(dir string) any {
				return []mnt{{Type: mount.TypeBind, Source: filepath.Join(dir, "conf"), Target: "/etc/app", ReadOnly: true}}
			}},
		{name: "bind absolute", yml: svc("    volumes:\n      - type: bind\n        source: /var/log\n        target: /logs\n"), get: mounts,
			want: []mnt{{Type: mount.TypeBind, Source: "/var/log", Target: "/logs"}}},
		{name: "tmpfs volume with size", yml: svc("    volumes:\n      - type: tmpfs\n        target: /cache\n        tmpfs:\n          size: 10m\n"), get: mounts,
			want: []mnt{{Type: mount.TypeTmpfs, Target: "/cache", Tmpfs: &mount.TmpfsOptions{SizeBytes: 10 * mi}}}},
		// secrets
		{name: "secret short form", yml: svc("    secrets:\n      - db_pass\n") + "secrets:\n  db_pass:\n    file: ./db_pass.txt\n", files: map[string]string{"db_pass.txt": "s3cret"}, get: mounts,
			wantD: func(dir string) any {
				return []mnt{{Type: mount.TypeBind, Source: filepath.Join(dir, "db_pass.txt"), Target: "/run/secrets/db_pass", ReadOnly: true}}
			}},
		{name: "secret long form absolute target", yml: svc("    secrets:\n      - source: db_pass\n        target: /etc/db/password\n") + "secrets:\n  db_pass:\n    file: ./db_pass.txt\n", files: map[string]string{"db_pass.txt": "s3cret"}, get: mounts,
			wantD: func(dir string) any {
				return []mnt{{Type: mount.TypeBind, Source: filepath.Join(dir, "db_pass.txt"), Target: "/etc/db/password", ReadOnly: true}}
			}},
		{name: "secret long form relative target", yml: svc("    secrets:\n      - source: db_pass\n        target: password\n") + "secrets:\n  db_pass:\n    file: ./db_pass.txt\n", files: map[string]string{"db_pass.txt": "s3cret"}, get: mounts,
			wantD: func(dir string) any {
				return []mnt{{Type: mount.TypeBind, Source: filepath.Join(dir, "db_pass.txt"), Target: "/run/secrets/password", ReadOnly: true}}
			}},
		{name: "secret from environment", yml: svc("    secrets:\n      - token\n") + "secrets:\n  token:\n    environment: API_TOKEN\n", err: "file"},
		// configs
		{name: "config short form", yml: svc("    configs:\n      - app_cfg\n") + "configs:\n  app_cfg:\n    file: ./app.conf\n", files: map[string]string{"app.conf": "a=1"}, get: mounts,
			wantD: func(dir string) any {
				return []mnt{{Type: mount.TypeBind, Source: filepath.Join(dir, "app.conf"), Target: "/app_cfg", ReadOnly: true}}
			}},
		{name: "config with target", yml: svc("    configs:\n      - source: app_cfg\n        target: /etc/app/app.conf\n") + "configs:\n  app_cfg:\n    file: ./app.conf\n", files: map[string]string{"app.conf": "a=1"}, get: mounts,
			wantD: func(dir string) any {
				return []mnt{{Type: mount.TypeBind, Source: filepath.Join(dir, "app.conf"), Target: "/etc/app/app.conf", ReadOnly: true}}
			}},
		// healthcheck
		{name: "healthcheck CMD", yml: svc("    healthcheck:\n      test: [\"CMD\", \"curl\", \"-f\", \"http://localhost/health\"]\n"), get: health,
			want: &container.HealthConfig{Test: []string{"CMD", "curl", "-f", "http://localhost/health"}}},
		{name: "healthcheck CMD-SHELL", yml: svc("    healthcheck:\n      test: [\"CMD-SHELL\", \"pg_isready -U postgres\"]\n"), get: health,
			want: &container.HealthConfig{Test: []string{"CMD-SHELL", "pg_isready -U postgres"}}},
		{name: "healthcheck string", yml: svc("    healthcheck:\n      test: curl -f http://localhost/ || exit 1\n"), get: health,
			want: &container.HealthConfig{Test: []string{"CMD-SHELL", "curl -f http://localhost/ || exit 1"}}},
		{name: "healthcheck timings", yml: svc("    healthcheck:\n      test: [\"CMD\", \"true\"]\n      interval: 10s\n      timeout: 3s\n      retries: 5\n      start_period: 30s\n"), get: health,
			want: &container.HealthConfig{Test: []string{"CMD", "true"}, Interval: 10 * time.Second, Timeout: 3 * time.Second, Retries: 5, StartPeriod: 30 * time.Second}},
		{name: "healthcheck disable", yml: svc("    healthcheck:\n      disable: true\n"), get: health, want: &container.HealthConfig{Test: []string{"NONE"}}},
		{name: "no healthcheck", yml: svc(""), get: health, want: (*container.HealthConfig)(nil)},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			proj, dir := loadComposeSnippet(t, r.yml, r.files)
			cfg, ok := proj.Services["svc"]
			if !ok {
				t.Fatal("no service svc")
			}
			x, err := newComposeExtras(proj, cfg, runVolumes{"data": "chaosrun-RUN-data"})
			if r.err != "" {
				if err == nil {
					t.Fatalf("no error, want one mentioning %q", r.err)
				}
				if !strings.Contains(err.Error(), r.err) {
					t.Fatalf("error %q does not mention %q", err, r.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := r.want
			if r.wantD != nil {
				want = r.wantD(dir)
			}
			if got := r.get(x, cfg); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
		})
	}
}
