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
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/moby/moby/client"
)

// Labels every container and network of a run carries.
const (
	LabelRun      = "chaosrun.run"
	LabelScenario = "chaosrun.scenario"
	LabelService  = "chaosrun.service"
	// LabelOwner is "PID:START@HOSTNAME" of the harness that made the
	// object (START: the process's start time), so that Clean can leave
	// the objects of a harness that still runs — and only those: a reused
	// PID has another start time.
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
