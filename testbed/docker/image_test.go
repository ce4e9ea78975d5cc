package docker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseLdd(t *testing.T) {
	out := `	linux-vdso.so.1 (0x00007ffd6b9f1000)
	liblzf.so.1 => /lib/x86_64-linux-gnu/liblzf.so.1 (0x00007fe122242000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007fe12121e000)
	/lib64/ld-linux-x86-64.so.2 (0x00007fe122265000)
	libm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007fe122162000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007fe12121e000)
`
	want := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/liblzf.so.1", "/lib/x86_64-linux-gnu/libm.so.6", "/lib64/ld-linux-x86-64.so.2"}
	if got := parseLdd(out); !slices.Equal(got, want) {
		t.Errorf("parseLdd = %v, want %v", got, want)
	}
}

func TestOwnerAlive(t *testing.T) {
	host := strings.Split(Owner(), "@")[1]
	self := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		owner string
		want  bool
	}{
		{Owner(), true},
		{self + "@" + host, true},      // a label from before start times: by PID alone
		{self + ":1@" + host, false},   // this PID, started at another time: reused
		{self + ":x:y@" + host, false}, // garbage start time
		{"999999999@" + host, false},   // gone
		{"999999999:5@" + host, false}, // gone
		{"1@some-other-host", true},    // cannot tell
		{"garbage", false},
	} {
		if got := ownerAlive(tc.owner); got != tc.want {
			t.Errorf("ownerAlive(%q) = %v, want %v", tc.owner, got, tc.want)
		}
	}
}

// TestImagesBuildAndReuse builds the chaosrun image and the Redis image from
// this machine's files, then asks again: the second time nothing is built.
func TestImagesBuildAndReuse(t *testing.T) {
	cli := requireDocker(t)
	ref := testImage(t, cli)
	if !strings.HasPrefix(ref, ChaosrunRepo+":") {
		t.Fatalf("image ref %q lacks the %s repository", ref, ChaosrunRepo)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	redis, _ := FindHostProgram("chaosrun-redis:local")
	if _, err := redis.Ensure(ctx, cli, nil); err != nil {
		t.Fatal(err)
	}
	again, err := redis.Ensure(ctx, cli, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Built {
		t.Errorf("redis image rebuilt though its files did not change")
	}
	imgs, err := ListImages(ctx, cli)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, im := range imgs {
		refs = append(refs, im.Ref)
	}
	for _, want := range []string{ref, "chaosrun-redis:local"} {
		if !slices.Contains(refs, want) {
			t.Errorf("ListImages = %v, lacks %s", refs, want)
		}
	}
}

func TestInstallArgs(t *testing.T) {
	for _, tc := range []struct {
		path, version string
		want          string // "" for errNoModuleVersion
	}{
		{"github.com/chaosrun/chaosrun/cmd/chaosrun", "v1.2.3", "install -trimpath github.com/chaosrun/chaosrun/cmd/chaosrun@v1.2.3"},
		{"github.com/chaosrun/chaosrun/cmd/chaosrun", "v0.0.0-20260101000000-0123456789ab", "install -trimpath github.com/chaosrun/chaosrun/cmd/chaosrun@v0.0.0-20260101000000-0123456789ab"},
		{"github.com/chaosrun/chaosrun/cmd/chaosrun", "(devel)", ""},
		{"github.com/chaosrun/chaosrun/cmd/chaosrun", "", ""},
		{"github.com/chaosrun/chaosrun/cmd/chaosrun", "v0.0.0-20260101000000-0123456789ab+dirty", ""},
		{"", "v1.2.3", ""},
	} {
		args, err := installArgs(tc.path, tc.version)
		if got := strings.Join(args, " "); got != tc.want || (tc.want == "") != errors.Is(err, errNoModuleVersion) {
			t.Errorf("installArgs(%q, %q) = %q, %v; want %q", tc.path, tc.version, got, err, tc.want)
		}
	}
}

// TestStaticBinaryWithoutSources: a binary that is not static, outside a
// checkout and of no module version cannot be packed; the error says how
// to get one that can.
func TestStaticBinaryWithoutSources(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "chaosrun")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := StaticBinary(context.Background(), exe, "", t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") || !strings.Contains(err.Error(), "run it from the repository") {
		t.Fatalf("StaticBinary = %v; want an error naming CGO_ENABLED=0 and the repository", err)
	}
}
