package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// ChaosrunRepo is the repository of the image holding the static chaosrun
// binary; its tag is the binary's content hash.
const ChaosrunRepo = "chaosrun-local"

// ChaosrunPort is the port every chaosrun service listens on inside its
// container; ToxiproxyPort is Toxiproxy's API port.
const (
	ChaosrunPort  = 8080
	ToxiproxyPort = 8474
)

// Image is a local image this package built or found.
type Image struct {
	Ref     string    `json:"ref"`
	Kind    string    `json:"kind"`
	ID      string    `json:"id"`
	Size    int64     `json:"size"`
	Created time.Time `json:"created"`
	// Built is true when this call built it (false: reused).
	Built bool `json:"built"`
}

// IsStatic reports whether the ELF file at path needs no dynamic loader,
// so it runs in a FROM scratch image.
func IsStatic(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, fmt.Errorf("docker: %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	libs, _ := f.ImportedLibraries()
	return len(libs) == 0, nil
}

// StaticBinary returns a static chaosrun binary: exe itself when it is
// static, else one built with CGO_ENABLED=0 into cacheDir from the source
// tree at root (the Go build cache makes a rebuild of unchanged source
// take seconds) or, without one, from exe's module version (go install).
// Progress lines go to progress.
func StaticBinary(ctx context.Context, exe, root, cacheDir string, progress io.Writer) (string, error) {
	if exe != "" {
		if ok, err := IsStatic(exe); err == nil && ok {
			return exe, nil
		}
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("docker: cache folder: %w", err)
	}
	if root == "" {
		bin, err := installStatic(ctx, exe, cacheDir, progress)
		if errors.Is(err, errNoModuleVersion) {
			return "", fmt.Errorf("docker: %s is not a static binary, and neither a source tree nor a module version to build one from: build chaosrun with CGO_ENABLED=0 (a release binary is), or run it from the repository", exe)
		}
		return bin, err
	}
	out := filepath.Join(cacheDir, "chaosrun-static")
	if progress != nil {
		fmt.Fprintln(progress, "docker: building the static chaosrun binary (CGO_ENABLED=0) for the images…")
	}
	tmp := fmt.Sprintf("%s.tmp-%d", out, os.Getpid())
	defer os.Remove(tmp)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", tmp, "./cmd/chaosrun")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), linuxStatic...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("docker: go build ./cmd/chaosrun (CGO_ENABLED=0) in %s: %w\n%s", root, err, b)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("docker: %w", err)
	}
	return out, nil
}

// fileHash is the first 12 hex digits of the SHA-256 of files' contents,
// each preceded by its name.
func fileHash(files map[string]string) (string, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		f, err := os.Open(files[n])
		if err != nil {
			return "", fmt.Errorf("docker: hash %s: %w", files[n], err)
		}
		io.WriteString(h, n+"\x00") //nolint:errcheck // hashes do not fail
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("docker: hash %s: %w", files[n], err)
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// ChaosrunImage returns the image holding the static binary bin, building
// it when no image with its content hash exists.
func ChaosrunImage(ctx context.Context, cli *client.Client, bin string, progress io.Writer) (Image, error) {
	hash, err := fileHash(map[string]string{"chaosrun": bin})
	if err != nil {
		return Image{}, err
	}
	ref := ChaosrunRepo + ":" + hash
	spec := buildSpec{
		ref:        ref,
		kind:       "chaosrun",
		hash:       hash,
		files:      map[string]string{"chaosrun": bin},
		dockerfile: "FROM scratch\nCOPY chaosrun /chaosrun\nENTRYPOINT [\"/chaosrun\"]\n",
	}
	return ensureImage(ctx, cli, spec, progress)
}

// buildSpec is one image to build from files with a Dockerfile.
type buildSpec struct {
	ref, kind, hash string
	// files maps a path in the build context to the host file it copies.
	files      map[string]string
	dirs       []string // empty folders in the context
	dockerfile string
}

// ensureImage reuses an image of spec.ref built from the same content, else
// builds it through the Docker API (no buildx, no registry: FROM scratch).
func ensureImage(ctx context.Context, cli *client.Client, spec buildSpec, progress io.Writer) (Image, error) {
	if img, err := inspectImage(ctx, cli, spec.ref); err == nil {
		if img.Config != nil && img.Config.Labels[LabelContent] == spec.hash {
			return Image{Ref: spec.ref, Kind: spec.kind, ID: img.ID, Size: img.Size, Created: parseTime(img.Created)}, nil
		}
	} else if !cerrdefs.IsNotFound(err) {
		return Image{}, fmt.Errorf("docker: inspect image %s: %w", spec.ref, err)
	}
	if progress != nil {
		fmt.Fprintf(progress, "docker: building image %s…\n", spec.ref)
	}
	buildCtx, err := tarContext(spec)
	if err != nil {
		return Image{}, err
	}
	res, err := cli.ImageBuild(ctx, buildCtx, client.ImageBuildOptions{
		Tags:        []string{spec.ref},
		Remove:      true,
		ForceRemove: true,
		Labels:      map[string]string{LabelImage: spec.kind, LabelContent: spec.hash},
	})
	if err != nil {
		return Image{}, fmt.Errorf("docker: build image %s: %w", spec.ref, err)
	}
	defer res.Body.Close()
	if err := readBuildStream(res.Body); err != nil {
		return Image{}, fmt.Errorf("docker: build image %s: %w", spec.ref, err)
	}
	img, err := inspectImage(ctx, cli, spec.ref)
	if err != nil {
		return Image{}, fmt.Errorf("docker: image %s missing after its build: %w", spec.ref, err)
	}
	return Image{Ref: spec.ref, Kind: spec.kind, ID: img.ID, Size: img.Size, Created: parseTime(img.Created), Built: true}, nil
}

func inspectImage(ctx context.Context, cli *client.Client, ref string) (client.ImageInspectResult, error) {
	return cli.ImageInspect(ctx, ref)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// readBuildStream drains the engine's build messages and returns the first
// error it reports.
func readBuildStream(r io.Reader) error {
	dec := json.NewDecoder(r)
	var last []string
	for {
		var m struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading the build output: %w", err)
		}
		if s := strings.TrimSpace(m.Stream); s != "" {
			last = append(last, s)
			if len(last) > 6 {
				last = last[1:]
			}
		}
		if m.Error != "" || m.ErrorDetail.Message != "" {
			return fmt.Errorf("%s (last build lines: %s)", strings.TrimSpace(m.Error+" "+m.ErrorDetail.Message), strings.Join(last, " | "))
		}
	}
}

// tarContext packs the Dockerfile, files and folders into a build context.
func tarContext(spec buildSpec) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Unix(0, 0)
	add := func(hdr *tar.Header, body io.Reader) error {
		hdr.ModTime = now
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if body != nil {
			_, err := io.Copy(tw, body)
			return err
		}
		return nil
	}
	if err := add(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(spec.dockerfile)), Typeflag: tar.TypeReg}, strings.NewReader(spec.dockerfile)); err != nil {
		return nil, fmt.Errorf("docker: build context: %w", err)
	}
	for _, d := range spec.dirs {
		if err := add(&tar.Header{Name: strings.TrimSuffix(d, "/") + "/", Mode: 0o1777, Typeflag: tar.TypeDir}, nil); err != nil {
			return nil, fmt.Errorf("docker: build context: %w", err)
		}
	}
	names := make([]string, 0, len(spec.files))
	for n := range spec.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f, err := os.Open(spec.files[n])
		if err != nil {
			return nil, fmt.Errorf("docker: build context: %w", err)
		}
		fi, err := f.Stat()
		if err == nil {
			err = add(&tar.Header{Name: n, Mode: int64(fi.Mode().Perm() | 0o444), Size: fi.Size(), Typeflag: tar.TypeReg}, f)
		}
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("docker: build context: %s: %w", spec.files[n], err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("docker: build context: %w", err)
	}
	return &buf, nil
}

// ListImages lists the images this package built, newest first.
func ListImages(ctx context.Context, cli *client.Client) ([]Image, error) {
	res, err := cli.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("label", LabelImage)})
	if err != nil {
		return nil, fmt.Errorf("docker: list images: %w", err)
	}
	var out []Image
	for _, s := range res.Items {
		for _, ref := range s.RepoTags {
			out = append(out, Image{Ref: ref, Kind: s.Labels[LabelImage], ID: s.ID, Size: s.Size, Created: time.Unix(s.Created, 0)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.After(out[j].Created)
		}
		return out[i].Ref < out[j].Ref
	})
	return out, nil
}

// PruneImages removes the images this package built except those in keep
// (by reference); an image still used by a container is left and named in
// the error.
func PruneImages(ctx context.Context, cli *client.Client, keep []string) ([]string, error) {
	imgs, err := ListImages(ctx, cli)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, im := range imgs {
		if slices.Contains(keep, im.Ref) {
			continue
		}
		if _, err := cli.ImageRemove(ctx, im.Ref, client.ImageRemoveOptions{PruneChildren: true}); err != nil {
			errs = append(errs, fmt.Errorf("docker: remove image %s: %w", im.Ref, err))
			continue
		}
		removed = append(removed, im.Ref)
	}
	return removed, errors.Join(errs...)
}

// LocalImage builds the image ref from files (build-context path → file on
// this machine) and a Dockerfile, or reuses it when it was built from the
// same content: a program of the user's packed FROM scratch, never pulled.
func LocalImage(ctx context.Context, cli *client.Client, ref string, files map[string]string, dockerfile string, progress io.Writer) (Image, error) {
	hash, err := fileHash(files)
	if err != nil {
		return Image{}, err
	}
	sum := sha256.Sum256([]byte(hash + "\x00" + dockerfile))
	hash = hex.EncodeToString(sum[:])[:12]
	return ensureImage(ctx, cli, buildSpec{ref: ref, kind: "local", hash: hash, files: files, dockerfile: dockerfile}, progress)
}

// WriteImages writes imgs to w as a table: reference, kind, ID, size and
// when each was built.
func WriteImages(w io.Writer, imgs []Image) {
	fmt.Fprintf(w, "%-34s %-20s %-14s %9s  %s\n", "IMAGE", "KIND", "ID", "SIZE", "CREATED")
	for _, im := range imgs {
		id := strings.TrimPrefix(im.ID, "sha256:")
		fmt.Fprintf(w, "%-34s %-20s %-14.12s %8.1fM  %s\n", im.Ref, im.Kind, id, float64(im.Size)/1e6, im.Created.Format(time.DateTime))
	}
}
