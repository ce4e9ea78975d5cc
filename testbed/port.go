package testbed

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A command: service's program takes its port as a number ({port},
// CHAOSRUN_PORT): it cannot be handed a listening socket. So the port is
// picked by the kernel and held for the program until the program listens
// on it (reservePort), and once the program answers, the listener on the
// port must be the program's (portOwned): a port that someone else took is
// never taken for the service.

// reservation is a port picked for a program, held until released.
type reservation struct {
	port    int
	release func()
	// held says the port is bound until release; false when it was only
	// probed (closed at once: the program may not allow address reuse, or
	// the system has no way to hold a port for another process to bind).
	held bool
}

// probePort asks the kernel for a free 127.0.0.1 port and lets it go at
// once: another process may be given it before the program binds it.
func probePort() (reservation, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return reservation{}, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return reservation{port: port, release: func() {}}, nil
}

// pickPort reserves a port (reservePort) when hold, else probes one.
func pickPort(hold bool) (reservation, error) {
	if hold {
		return reservePort()
	}
	return probePort()
}

// portOwned says whether every socket listening on port (on any local
// address) belongs to a process of process group pgid. known is false when
// the system does not tell (no /proc) or nothing listens on port.
func portOwned(port, pgid int) (owned, known bool) {
	inodes := listeningInodes(port)
	if len(inodes) == 0 {
		return false, false
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if g, ok := groupOf(pid); !ok || g != pgid {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join(d, "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(d, "fd", fd.Name()))
			if err == nil {
				delete(inodes, link)
			}
		}
	}
	return len(inodes) == 0, true
}

// listeningInodes are the sockets listening on port, IPv4 and IPv6, by
// the name their descriptors link to ("socket:[INODE]"), from
// /proc/net/tcp{,6}; none where there is no /proc.
func listeningInodes(port int) map[string]bool {
	out := map[string]bool{}
	suffix := fmt.Sprintf(":%04X", port)
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			const listen = "0A"
			if len(fields) > 9 && strings.HasSuffix(fields[1], suffix) && fields[3] == listen {
				out["socket:["+fields[9]+"]"] = true
			}
		}
		f.Close()
	}
	return out
}
