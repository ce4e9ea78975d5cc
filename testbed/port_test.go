package testbed

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
)

// Environment that makes the test binary a command: service's program: an
// HTTP server on 127.0.0.1:$CHAOSRUN_PORT that answers /healthz and says
// who it is on /whoami, setting SO_REUSEADDR as servers do unless
// noReuseEnv is set.
const (
	serverEnv  = "CHAOSRUN_TESTBED_TEST_SERVER"
	noReuseEnv = "CHAOSRUN_TESTBED_TEST_NO_REUSE"
)

// testServer is the program serverEnv asks for; it returns its exit code.
func testServer(who string) int {
	lc := net.ListenConfig{}
	if os.Getenv(noReuseEnv) != "" {
		lc.Control = noReuse
	}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:"+os.Getenv("CHAOSRUN_PORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(os.Stderr, http.Serve(ln, whoami(who)))
	return 1
}

// whoami says who on every path, /healthz among them.
func whoami(who string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, who) }) //nolint:errcheck
}

// noReuse turns SO_REUSEADDR off on a socket (net.Listen turns it on).
func noReuse(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 0)
	}); err != nil {
		return err
	}
	return serr
}

// TestReliabilityCommandPortCannotBeTaken: another process binds the port
// picked for a command: service's program between the pick and the
// program's start. A bind without address reuse is refused (the port is
// held for the program); a listener that binds with address reuse and
// answers the health check is found not to be the program's, and the
// program starts on another port; a program that does not allow address
// reuse itself starts on a port that is not held. Each time the instance
// is the program. (Before: the first took the port and the start failed
// after its health timeout; the second became the instance, a stranger.)
// About 1 s.
func TestReliabilityCommandPortCannotBeTaken(t *testing.T) {
	for _, tc := range []struct {
		name     string
		stranger func(t *testing.T, port int) (took bool)
		noReuse  bool
		picks    int // ports picked until the program had one
	}{
		{name: "a bind without address reuse", picks: 1, stranger: func(t *testing.T, port int) bool {
			return listenStranger(t, port, net.ListenConfig{Control: noReuse}, false)
		}},
		{name: "a listener with address reuse that answers health", picks: 2, stranger: func(t *testing.T, port int) bool {
			return listenStranger(t, port, net.ListenConfig{}, true)
		}},
		{name: "a program that does not allow address reuse", picks: 2, noReuse: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var picked []int
			took := false
			afterPortPicked = func(port int) {
				if len(picked) == 0 && tc.stranger != nil {
					took = tc.stranger(t, port)
				}
				picked = append(picked, port)
			}
			defer func() { afterPortPicked = nil }()
			l := &Local{Binary: os.Args[0], LogDir: t.TempDir(), ReadyTimeout: 5 * time.Second}
			svc := &scenario.Service{Command: []string{os.Args[0], "-test.run=^$"}, Env: map[string]string{serverEnv: "program"}}
			if tc.noReuse {
				svc.Env[noReuseEnv] = "1"
			}
			p, err := l.commandInstance(context.Background(), "svc", svc, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Down(context.Background()) //nolint:errcheck
			if got := get(t, "http://"+p.addr+"/whoami"); got != "program" {
				t.Errorf("the instance at %s is %q, want the program", p.addr, got)
			}
			_, port := splitAddr(p.addr)
			t.Logf("the stranger took the first port: %v; ports picked %v; the program listens on %d", took, picked, port)
			if len(picked) != tc.picks {
				t.Errorf("%d ports picked (%v), want %d", len(picked), picked, tc.picks)
			}
			if owned, known := portOwned(port, p.cmd.Process.Pid); !owned || !known {
				t.Errorf("port %d: owned by the program's group %v (known %v)", port, owned, known)
			}
		})
	}
}

// listenStranger listens on 127.0.0.1:port as another process would,
// answering "stranger" when serve; it says whether it could.
func listenStranger(t *testing.T, port int, lc net.ListenConfig, serve bool) bool {
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Logf("the stranger could not listen on %d: %v", port, err)
		return false
	}
	t.Cleanup(func() { ln.Close() })
	if serve {
		go http.Serve(ln, whoami("stranger")) //nolint:errcheck // ends when ln closes
	}
	return true
}

func get(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
