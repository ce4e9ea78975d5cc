package docker

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/moby/moby/client"
)

// BuildOptions say where the chaosrun image's binary comes from.
type BuildOptions struct {
	// Executable is the running chaosrun; when it is not static, one is
	// built from the source tree at Root into CacheDir.
	Executable, Root, CacheDir string
	// Progress receives what was built or reused; nil discards it.
	Progress io.Writer
}

func (o BuildOptions) progress() io.Writer {
	if o.Progress == nil {
		return io.Discard
	}
	return o.Progress
}

// EnsureChaosrunImage returns the chaosrun image of this build, building
// the static binary and the image when they are missing.
func EnsureChaosrunImage(ctx context.Context, cli *client.Client, o BuildOptions) (Image, error) {
	bin, err := StaticBinary(ctx, o.Executable, o.Root, o.CacheDir, o.progress())
	if err != nil {
		return Image{}, err
	}
	return ChaosrunImage(ctx, cli, bin, o.progress())
}

// EnsureImages builds what the Docker testbed runs and is missing: the
// chaosrun image and every host program's image. It says what each took
// and returns their references.
func EnsureImages(ctx context.Context, cli *client.Client, o BuildOptions) ([]string, error) {
	t0 := time.Now()
	img, err := EnsureChaosrunImage(ctx, cli, o)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.progress(), "%s %s (%s)\n", img.Ref, builtWord(img.Built), time.Since(t0).Round(time.Millisecond))
	refs := []string{img.Ref}
	for _, hp := range HostPrograms {
		t0 := time.Now()
		img, err := hp.Ensure(ctx, cli, o.progress())
		if err != nil {
			return refs, err
		}
		fmt.Fprintf(o.progress(), "%s %s from %s (%s)\n", img.Ref, builtWord(img.Built), hp.Binary, time.Since(t0).Round(time.Millisecond))
		refs = append(refs, img.Ref)
	}
	return refs, nil
}

func builtWord(built bool) string {
	if built {
		return "built"
	}
	return "present (reused)"
}
