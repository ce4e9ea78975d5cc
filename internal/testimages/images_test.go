package testimages

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/moby/moby/client"
)

// TestEnsure builds every image twice, timing each: the second call reuses
// the first's images (same content, nothing rebuilt).
func TestEnsure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Docker images")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cli, err := docker.NewClient(ctx)
	if err != nil {
		testenv.Unavailable(t, "no reachable Docker engine: %v", err)
	}
	defer cli.Close()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	builders := map[string]func(context.Context, *client.Client, string, io.Writer) (docker.Image, error){
		PostgresRef: Postgres, RedisRef: Redis, NginxRef: Nginx,
	}
	for round := range 2 {
		for _, ref := range Refs {
			start := time.Now()
			im, err := builders[ref](ctx, cli, root, nil)
			if err != nil {
				t.Fatal(err)
			}
			if im.Ref != ref {
				t.Errorf("built %s, want %s", im.Ref, ref)
			}
			t.Logf("round %d: %s %.1f MB built=%v in %s", round, im.Ref, float64(im.Size)/1e6, im.Built, time.Since(start).Round(time.Millisecond))
			if round == 1 && im.Built {
				t.Errorf("%s was rebuilt from unchanged content", im.Ref)
			}
		}
	}
}
