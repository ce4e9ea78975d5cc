package docker

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chaosrun/chaosrun/internal/exitcode"
)

// TestCleanCommand: clean's command line, from its flags to its exit
// code: a dry run of a run that left nothing says so; an engine that does
// not answer exits 3.
func TestCleanCommand(t *testing.T) {
	o := CleanOptions{Run: "no-such-run-of-the-clean-test", DryRun: true}
	t.Run("no engine", func(t *testing.T) {
		t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
		err := o.Command(context.Background(), &bytes.Buffer{})
		if ee, ok := exitcode.As(err); !ok || ee.Code != exitcode.RunError || !strings.Contains(ee.Err.Error(), "does not answer") {
			t.Fatalf("got %v, want exit 3 saying the engine does not answer", err)
		}
	})
	t.Run("nothing left", func(t *testing.T) {
		requireDocker(t)
		var stdout bytes.Buffer
		if err := o.Command(context.Background(), &stdout); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout.String(), "nothing left behind by chaosrun runs") {
			t.Errorf("stdout %q", stdout.String())
		}
	})
}
