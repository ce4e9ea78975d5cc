package testimages

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/moby/moby/client"
)

// pgHome is where Debian installs PostgreSQL 15's programs and modules.
const pgHome = "/usr/lib/postgresql/15"

const pathEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Postgres builds PostgreSQL 15 from Debian's postgresql-15: the server,
// initdb, pg_isready and psql, its modules and share files, /bin/sh (dash,
// which initdb runs programs through), a postgres user and a static
// entrypoint (pgentry) that initializes an empty data folder from
// POSTGRES_USER, POSTGRES_PASSWORD(_FILE) and POSTGRES_DB as the official
// image does.
func Postgres(ctx context.Context, cli *client.Client, root string, progress io.Writer) (docker.Image, error) {
	tmp, err := os.MkdirTemp("", "pgentry-")
	if err != nil {
		return docker.Image{}, err
	}
	defer os.RemoveAll(tmp)
	entry := filepath.Join(tmp, "pgentry")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", entry, "./internal/testimages/pgentry")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		return docker.Image{}, fmt.Errorf("testimages: go build ./internal/testimages/pgentry: %w\n%s", err, out)
	}
	mods, err := filepath.Glob(pgHome + "/lib/*.so")
	if err != nil {
		return docker.Image{}, err
	}
	var libs []string
	for _, m := range mods {
		if !strings.Contains(filepath.Base(m), "llvmjit") { // no JIT: it would bring LLVM
			libs = append(libs, m)
		}
	}
	r := recipe{
		ref:      PostgresRef,
		pkg:      "postgresql-15",
		programs: []string{pgHome + "/bin/postgres", pgHome + "/bin/initdb", pgHome + "/bin/pg_isready", pgHome + "/bin/psql", "/usr/bin/dash"},
		libs:     libs,
		files: map[string]string{
			"/usr/local/bin/docker-entrypoint": entry,
			"/bin/sh":                          "/usr/bin/dash",
			"/usr/share/zoneinfo/UTC":          "/usr/share/zoneinfo/UTC",
			"/usr/share/zoneinfo/Etc/UTC":      "/usr/share/zoneinfo/Etc/UTC",
			"/usr/share/zoneinfo/GMT":          "/usr/share/zoneinfo/GMT",
			"/usr/share/zoneinfo/Etc/GMT":      "/usr/share/zoneinfo/Etc/GMT",
		},
		trees: []string{"/usr/share/postgresql/15"},
		generated: map[string]string{
			"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999:PostgreSQL administrator:/var/lib/postgresql:/bin/sh\n",
			"/etc/group":  "root:x:0:\npostgres:x:999:\n",
		},
		dockerfile: "FROM scratch\nCOPY rootfs/ /\n" +
			"ENV " + strings.Replace(pathEnv, ":/usr/sbin", ":"+pgHome+"/bin:/usr/sbin", 1) + " PGDATA=/var/lib/postgresql/data TZ=UTC\n" +
			"VOLUME /var/lib/postgresql/data\nEXPOSE 5432/tcp\nSTOPSIGNAL SIGINT\n" +
			"ENTRYPOINT [\"/usr/local/bin/docker-entrypoint\"]\nCMD [\"postgres\"]\n",
	}
	return r.build(ctx, cli, progress)
}

// Redis builds Redis 7 from Debian's redis-server (and redis-cli, for
// health checks), serving from /data with protected mode off, as the
// official image runs it.
func Redis(ctx context.Context, cli *client.Client, _ string, progress io.Writer) (docker.Image, error) {
	r := recipe{
		ref:      RedisRef,
		pkg:      "redis-server",
		programs: []string{"/usr/bin/redis-server", "/usr/bin/redis-cli"},
		generated: map[string]string{
			"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nredis:x:999:999::/data:/bin/false\n",
			"/etc/group":  "root:x:0:\nredis:x:999:\n",
		},
		dockerfile: "FROM scratch\nCOPY rootfs/ /\nENV " + pathEnv + "\nWORKDIR /data\nVOLUME /data\nEXPOSE 6379/tcp\n" +
			"CMD [\"redis-server\", \"--protected-mode\", \"no\"]\n",
	}
	return r.build(ctx, cli, progress)
}

// nginxConf is the image's /etc/nginx/nginx.conf, the official image's:
// the site configuration goes in /etc/nginx/conf.d/*.conf.
const nginxConf = `user www-data;
worker_processes auto;
error_log stderr notice;
pid /run/nginx.pid;

events {
    worker_connections 1024;
}

http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format main '$remote_addr - $remote_user [$time_local] "$request" '
                    '$status $body_bytes_sent "$http_referer" '
                    '"$http_user_agent" "$http_x_forwarded_for"';
    access_log /dev/stdout main;
    sendfile on;
    keepalive_timeout 65;
    include /etc/nginx/conf.d/*.conf;
}
`

const nginxDefault = `server {
    listen 80;
    server_name localhost;
    location / {
        root /usr/share/nginx/html;
        index index.html;
    }
}
`

// Nginx builds nginx 1.22 from Debian's nginx-light with the official
// image's layout: nginx.conf includes /etc/nginx/conf.d/*.conf (a default
// site serves /usr/share/nginx/html), logs go to stdout and stderr, workers
// run as www-data.
func Nginx(ctx context.Context, cli *client.Client, _ string, progress io.Writer) (docker.Image, error) {
	r := recipe{
		ref:      NginxRef,
		pkg:      "nginx-light",
		programs: []string{"/usr/sbin/nginx"},
		files:    map[string]string{"/etc/nginx/mime.types": "/etc/nginx/mime.types"},
		generated: map[string]string{
			"/etc/passwd":                      "root:x:0:0:root:/root:/bin/sh\nwww-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n",
			"/etc/group":                       "root:x:0:\nwww-data:x:33:\n",
			"/etc/nginx/nginx.conf":            nginxConf,
			"/etc/nginx/conf.d/default.conf":   nginxDefault,
			"/usr/share/nginx/html/index.html": "<!DOCTYPE html>\n<title>Welcome to nginx!</title>\n<h1>Welcome to nginx!</h1>\n",
			"/var/lib/nginx/.keep":             "",
			"/var/log/nginx/.keep":             "",
			"/run/.keep":                       "",
		},
		dockerfile: "FROM scratch\nCOPY rootfs/ /\nENV " + pathEnv + "\nEXPOSE 80/tcp\nSTOPSIGNAL SIGQUIT\n" +
			"CMD [\"nginx\", \"-g\", \"daemon off;\"]\n",
	}
	return r.build(ctx, cli, progress)
}
