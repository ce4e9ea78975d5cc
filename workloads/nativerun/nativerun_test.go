package nativerun

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/workloads/native"
)

// modeEnv makes the test binary act as `chaosrun load` in one way.
const modeEnv = "NATIVERUN_TEST_MODE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(modeEnv); mode != "" {
		os.Exit(fakeLoad(mode))
	}
	os.Exit(m.Run())
}

// fakeLoad is the child: it prints its command line and token, then ends
// as mode says.
func fakeLoad(mode string) int {
	fmt.Println("args:", strings.Join(os.Args[1:], " "), "token:", os.Getenv(TokenEnv))
	sig := make(chan os.Signal, 1)
	switch mode {
	case "ok":
		return 0
	case "fails":
		fmt.Fprintln(os.Stderr, "chaosrun load: results stream: connect: refused")
		return 3
	case "stops":
		signal.Notify(sig, os.Interrupt)
		<-sig
		fmt.Println("end marker sent")
		return 130
	case "deaf":
		signal.Ignore(os.Interrupt)
		time.Sleep(time.Minute)
	case "crash":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
	}
	return 0
}

func spec(t *testing.T, mode string) Spec {
	t.Helper()
	t.Setenv(modeEnv, mode)
	return Spec{Binary: os.Args[0], SpecFile: "spec.json", Shard: native.Shard{Index: 1, Count: 3}, StreamAddr: "127.0.0.1:7000",
		StreamToken: "tok", LogPath: filepath.Join(t.TempDir(), "native.log"), Grace: 500 * time.Millisecond}
}

func TestRun(t *testing.T) {
	tests := []struct {
		mode     string
		cancel   time.Duration // 0: not cancelled
		wantErr  string        // "" for none
		wantLog  string
		maxTaken time.Duration
	}{
		{mode: "ok", wantLog: "args: load --spec spec.json --shard 1/3 --results tcp://127.0.0.1:7000 token: tok"},
		{mode: "fails", wantErr: "exited with code 3", wantLog: "connect: refused"},
		{mode: "stops", cancel: 300 * time.Millisecond, wantLog: "end marker sent", maxTaken: 2 * time.Second},
		{mode: "deaf", cancel: 300 * time.Millisecond, wantErr: "did not stop within 500ms of SIGINT and was killed", maxTaken: 3 * time.Second},
		{mode: "crash", wantErr: "killed by signal killed"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			s := spec(t, tt.mode)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, cancel)
			}
			t0 := time.Now()
			err := Run(ctx, s)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if tt.wantErr != "" && !strings.Contains(err.Error(), "args: load") {
				t.Errorf("the error does not quote the output: %v", err)
			}
			if tt.maxTaken > 0 && time.Since(t0) > tt.maxTaken {
				t.Errorf("took %s", time.Since(t0))
			}
			b, _ := os.ReadFile(s.LogPath)
			if !strings.Contains(string(b), tt.wantLog) {
				t.Errorf("log %q, want %q", b, tt.wantLog)
			}
		})
	}
}

func TestArgsWithTLS(t *testing.T) {
	s := Spec{SpecFile: "/o/logs/load-spec.json", Shard: native.Shard{Count: 1}, StreamAddr: "judge:7000",
		StreamOptions: map[string][]string{"ca": {"/ca.pem"}, "server_name": {"judge"}}}
	got := strings.Join(Args(s), " ")
	want := "load --spec /o/logs/load-spec.json --shard 0/1 --results tcp://judge:7000?ca=%2Fca.pem&server_name=judge"
	if got != want {
		t.Errorf("args %q, want %q", got, want)
	}
	if err := Run(context.Background(), Spec{}); err == nil {
		t.Error("an empty spec: want an error")
	}
}
