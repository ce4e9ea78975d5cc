// Package docker is the Docker testbed: each service in its own container on
// a private network, Toxiproxy in its own container, every image built here
// from the static chaosrun binary (never pulled), and host faults (stop,
// pause, kill, network disconnect) done to the containers themselves.
//
// Containers are created with Testcontainers-go; Ryuk is off, so every
// container and network carries run labels and this package removes them
// itself: on every teardown path, and in Clean for what a killed run left.
package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/client"
)

// Labels every container and network of a run carries.
const (
	LabelRun      = "chaosrun.run"
	LabelScenario = "chaosrun.scenario"
	LabelService  = "chaosrun.service"
	// LabelOwner is "PID@HOSTNAME" of the harness that made the object, so
	// Clean can leave the objects of a harness that still runs.
	LabelOwner = "chaosrun.owner"
	// LabelImage marks images built here; its value is the image's kind.
	LabelImage = "chaosrun.image"
	// LabelContent is the content hash an image was built from.
	LabelContent = "chaosrun.content"
)

var envOnce sync.Once

// setupEnv sets what Testcontainers must see before its first call: no Ryuk
// (its image cannot be pulled here; we clean up by label ourselves) and the
// host to reach mapped ports on (these machines carry /.dockerenv, which
// would otherwise make Testcontainers look for a gateway).
func setupEnv() {
	envOnce.Do(func() {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true") //nolint:errcheck // cannot fail for valid names
		if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
			os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "localhost") //nolint:errcheck
		}
	})
}

// NewClient connects to the Docker engine named by the environment
// (DOCKER_HOST, else the local socket) and checks that it answers.
func NewClient(ctx context.Context) (*client.Client, error) {
	setupEnv()
	cli, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker: client: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker: engine at %s does not answer: %w", cli.DaemonHost(), err)
	}
	return cli, nil
}

// Owner is this process's owner label value, "PID@HOSTNAME".
func Owner() string {
	h, _ := os.Hostname()
	return strconv.Itoa(os.Getpid()) + "@" + h
}

// ownerAlive reports whether the harness named by an owner label still runs
// on this host. Owners on other hosts count as alive: we cannot tell.
func ownerAlive(owner string) bool {
	i := strings.LastIndex(owner, "@")
	if i < 0 {
		return false
	}
	pidStr, host := owner[:i], owner[i+1:]
	if h, _ := os.Hostname(); h != host {
		return true
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	// Signal 0 checks the process exists (EPERM: it does, as another user's).
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
