package k6build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Options says where to find or build k6.
type Options struct {
	// K6Path is a user's own k6 build; it must list the extension in `k6 version`.
	K6Path string
	// Root is the repository root; default CHAOSRUN_ROOT, else found above
	// Dir, else none: the sources embedded in the binary serve.
	Root string
	// CacheDir holds built binaries; default CHAOSRUN_CACHE, else the user cache folder's chaosrun.
	CacheDir string
	// Progress receives build progress lines; nil discards them.
	Progress io.Writer
	// Getenv reads CHAOSRUN_ROOT and CHAOSRUN_CACHE; nil reads no
	// variable (pass os.Getenv for the process's environment).
	Getenv func(string) string
	// Dir is the working folder: relative paths resolve against it and the
	// root is searched from it upwards; "" is the process's.
	Dir string
}

// Binary is a k6 binary that carries the extension.
type Binary struct {
	Path string
	// Version is the first line of `k6 version`.
	Version string
}

// Timing and size limits.
const (
	progressEvery  = 15 * time.Second
	versionTimeout = 30 * time.Second
	buildTimeout   = 20 * time.Minute
	lockPoll       = 200 * time.Millisecond
	tailLines      = 25
)

// Ensure returns a k6 with xk6-resilience: opts.K6Path after checking it,
// else the cached build for this extension source, building it on a miss
// from Sources (the sources embedded in the binary, unless a checkout's
// differ from them).
func Ensure(ctx context.Context, opts Options) (Binary, error) {
	if opts.K6Path != "" {
		return Verify(ctx, opts.abs(opts.K6Path))
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	root, err := opts.Sources()
	if err != nil {
		return Binary{}, err
	}
	cache, err := opts.Cache()
	if err != nil {
		return Binary{}, err
	}
	ext := filepath.Join(root, ExtensionDir)
	hash, err := SourceHash(ext)
	if err != nil {
		return Binary{}, err
	}
	target := cachedK6(cache, hash)
	if isExecutable(target) {
		return Verify(ctx, target)
	}

	unlock, err := lock(ctx, filepath.Join(cache, ".build.lock"), progress)
	if err != nil {
		return Binary{}, err
	}
	defer unlock()
	if isExecutable(target) { // built by whoever held the lock
		return Verify(ctx, target)
	}

	fmt.Fprintf(progress, "building k6 %s with xk6-resilience from %s (first use of extension source %s; a cold build takes a few minutes)\n", K6Version, root, hash)
	xk6, err := ensureXK6(ctx, root, cache, progress)
	if err != nil {
		return Binary{}, err
	}
	logPath := target + ".log"
	tmp := fmt.Sprintf("%s.tmp-%d", target, os.Getpid())
	defer os.Remove(tmp)
	err = runLogged(ctx, progress, "k6 build", logPath, root, xk6,
		"build", K6Version, "--with", ExtensionModule+"="+ext,
		"--replace", ModelsModule+"="+filepath.Join(root, ModelsDir), "--output", tmp)
	if err != nil {
		return Binary{}, err
	}
	if err := os.Rename(tmp, target); err != nil {
		return Binary{}, fmt.Errorf("move built k6 into the cache: %w", err)
	}
	fmt.Fprintf(progress, "built %s\n", target)
	return Verify(ctx, target)
}

// Verify runs `k6 version` and checks that it lists the extension.
func Verify(ctx context.Context, path string) (Binary, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Binary{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, abs, "version")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return Binary{}, fmt.Errorf("k6 at %s: `k6 version` failed: %w: %s", abs, err, strings.TrimSpace(string(out)))
	}
	text := string(out)
	if !strings.Contains(text, ExtensionModule) {
		return Binary{}, fmt.Errorf("k6 at %s: %w: `k6 version` does not list %s; build it with xk6 build %s --with %s (see xk6-resilience/README.md):\n%s",
			abs, errNoExtension, ExtensionModule, K6Version, ExtensionModule, strings.TrimSpace(text))
	}
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	return Binary{Path: abs, Version: strings.TrimSpace(first)}, nil
}

// ensureXK6 returns the cached xk6, building it from the tools module on a miss.
func ensureXK6(ctx context.Context, root, cache string, progress io.Writer) (string, error) {
	target := filepath.Join(cache, "xk6-"+XK6Version)
	if isExecutable(target) {
		return target, nil
	}
	fmt.Fprintf(progress, "building xk6 %s from %s\n", XK6Version, XK6ToolsDir)
	tmp := fmt.Sprintf("%s.tmp-%d", target, os.Getpid())
	defer os.Remove(tmp)
	err := runLogged(ctx, progress, "xk6 build", filepath.Join(cache, "xk6-"+XK6Version+".log"),
		filepath.Join(root, XK6ToolsDir), "go", "build", "-o", tmp, "go.k6.io/xk6/cmd/xk6")
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, target); err != nil {
		return "", fmt.Errorf("move built xk6 into the cache: %w", err)
	}
	return target, nil
}

// runLogged runs a command with its output in logPath, printing elapsed time
// to progress every progressEvery; on failure the error carries the log's tail.
// Go runs with GOWORK=off: the repository's go.work is the harness's, not
// the tools module's nor xk6's build folder's.
func runLogged(ctx context.Context, progress io.Writer, what, logPath, dir, name string, args ...string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("%s: create log: %w", what, err)
	}
	defer logf.Close()
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start %s: %w", what, name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				if ctx.Err() != nil {
					err = fmt.Errorf("%w (%v)", ctx.Err(), err)
				}
				return fmt.Errorf("%s failed after %s: %w; log %s ends:\n%s", what, time.Since(start).Round(time.Second), err, logPath, tail(logPath, tailLines))
			}
			return nil
		case <-tick.C:
			fmt.Fprintf(progress, "  %s: %s elapsed\n", what, time.Since(start).Round(time.Second))
		}
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(log unreadable: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// lock takes an exclusive flock on path, polling so that ctx can cancel the wait.
func lock(ctx context.Context, path string, progress io.Writer) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("build lock %s: %w", path, err)
	}
	told := false
	deadline := time.Now().Add(buildTimeout + time.Minute)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("build lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("build lock %s: still held by another build after %s", path, buildTimeout+time.Minute)
		}
		if !told {
			fmt.Fprintf(progress, "waiting for another k6 build to finish (lock %s)\n", path)
			told = true
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for build lock %s: %w", path, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}
