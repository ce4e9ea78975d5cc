package docker

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/go-archive"
	"github.com/moby/moby/client"
	"github.com/moby/patternmatcher/ignorefile"
)

// buildRef is the run's own tag of a service's built image: the run
// removes it at teardown, and two runs never share it.
func buildRef(runID, service string) string {
	return "chaosrun-" + runID + "-" + strings.ToLower(service) + ":build"
}

// buildService builds a Compose service's image from its build: section
// (context, dockerfile or dockerfile_inline, args, target, labels) through
// the engine's API, as docker compose build does with the classic builder.
func (t *Testbed) buildService(ctx context.Context, name string, b *types.BuildConfig) (string, error) {
	ref := buildRef(t.RunID, name)
	if t.Progress != nil {
		fmt.Fprintf(t.Progress, "docker: building %s (context %s)…\n", name, b.Context)
	}
	body, dockerfile, err := buildContext(b)
	if err != nil {
		return "", fmt.Errorf("testbed: docker: build %s: %w", name, err)
	}
	defer body.Close()
	labels := t.labels(name)
	for k, v := range b.Labels {
		labels[k] = v
	}
	res, err := t.cli.ImageBuild(ctx, body, client.ImageBuildOptions{
		Tags: []string{ref}, Dockerfile: dockerfile, BuildArgs: b.Args, Target: b.Target,
		Labels: labels, Remove: true, ForceRemove: true, NoCache: b.NoCache,
	})
	if err != nil {
		return "", fmt.Errorf("testbed: docker: build %s (context %s): %w", name, b.Context, err)
	}
	defer res.Body.Close()
	t.mu.Lock()
	t.builtRefs = append(t.builtRefs, ref)
	t.mu.Unlock()
	if err := readBuildStream(res.Body); err != nil {
		return "", fmt.Errorf("testbed: docker: build %s (context %s, %s): %w", name, b.Context, dockerfile, err)
	}
	return ref, nil
}

// inlineDockerfile is where a dockerfile_inline goes in the context.
const inlineDockerfile = ".chaosrun.inline.Dockerfile"

// buildContext packs a build's context folder as the engine takes it,
// leaving out what its .dockerignore names, and says which file of it is
// the Dockerfile.
func buildContext(b *types.BuildConfig) (io.ReadCloser, string, error) {
	dir := b.Context
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, "", fmt.Errorf("context %s is not a folder", dir)
	}
	var excludes []string
	if f, err := os.Open(filepath.Join(dir, ".dockerignore")); err == nil {
		excludes, err = ignorefile.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", filepath.Join(dir, ".dockerignore"), err)
		}
	}
	dockerfile := b.Dockerfile
	if dockerfile == "" {
		dockerfile = "Dockerfile"
	}
	if filepath.IsAbs(dockerfile) {
		rel, err := filepath.Rel(dir, dockerfile)
		if err != nil || strings.HasPrefix(rel, "..") {
			return nil, "", fmt.Errorf("dockerfile %s is outside the context %s", dockerfile, dir)
		}
		dockerfile = rel
	}
	// The Dockerfile and .dockerignore go along even when ignored, as
	// the engine needs them.
	excludes = append(excludes, "!"+dockerfile, "!.dockerignore")
	rc, err := archive.TarWithOptions(dir, &archive.TarOptions{ExcludePatterns: excludes})
	if err != nil {
		return nil, "", err
	}
	if b.DockerfileInline == "" {
		return rc, filepath.ToSlash(dockerfile), nil
	}
	return withFile(rc, inlineDockerfile, b.DockerfileInline), inlineDockerfile, nil
}

// withFile is the tar stream rc with one more file, name, at its end.
func withFile(rc io.ReadCloser, name, content string) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		defer rc.Close()
		tr, tw := tar.NewReader(rc), tar.NewWriter(pw)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err == nil {
				err = tw.WriteHeader(hdr)
			}
			if err == nil {
				_, err = io.Copy(tw, tr)
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg})
		if err == nil {
			_, err = io.WriteString(tw, content)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr
}
