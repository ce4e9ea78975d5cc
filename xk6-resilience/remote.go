package resilience

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/models/wire"
)

// tcpOptions says how the TCP sink reaches the receiver.
type tcpOptions struct {
	addr string
	// tls, when set, makes the connection TLS.
	tls *tls.Config
	// awaitAnswer makes connect wait for the receiver's answer to hello
	// (the hello carries a token).
	awaitAnswer bool
}

// tcpKeys are the options of a tcp:// destination, with what they do. Each
// may also be set in k6's environment as K6_RESILIENCE_<KEY> (upper case),
// which keeps a token off k6's command line; the URL's query wins.
var tcpKeys = map[string]string{
	"token":       "the run's token, sent in the hello",
	"tls":         "true: connect with TLS, verified against the system's roots",
	"ca":          "a PEM file of the CA (or self-signed certificate) to trust; implies tls",
	"server_name": "the name the receiver's certificate must carry (default HOST); implies tls",
}

// parseTCP reads tcp://HOST:PORT[?token=T&tls=true&ca=FILE&server_name=NAME]
// into c, with defaults from K6_RESILIENCE_TOKEN, _TLS, _CA, _SERVER_NAME.
func parseTCP(arg string, env map[string]string, c *config) error {
	rest := strings.TrimPrefix(arg, "tcp://")
	addr, query, _ := strings.Cut(rest, "?")
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("resilience output: %q is not tcp://HOST:PORT: %w", arg, err)
	}
	c.tcpAddr = addr
	q, err := url.ParseQuery(query)
	if err != nil {
		return fmt.Errorf("resilience output: options of %q: %w", arg, err)
	}
	for k := range q {
		if _, ok := tcpKeys[k]; !ok {
			return fmt.Errorf("resilience output: unknown option %q in %q (allowed: %s)", k, arg, allowedKeys())
		}
	}
	for k := range tcpKeys {
		if v := env["K6_RESILIENCE_"+strings.ToUpper(k)]; v != "" && !q.Has(k) {
			q.Set(k, v)
		}
	}
	c.token = q.Get("token")
	useTLS := false
	if v := q.Get("tls"); v != "" {
		if useTLS, err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("resilience output: tls=%q: want true or false", v)
		}
	}
	ca, name := q.Get("ca"), q.Get("server_name")
	if !useTLS && ca == "" && name == "" {
		return nil
	}
	if q.Has("tls") && !useTLS {
		return errors.New("resilience output: tls=false contradicts ca or server_name")
	}
	if name == "" {
		name = host
	}
	c.tls = &tls.Config{ServerName: name, MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return fmt.Errorf("resilience output: ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("resilience output: ca %s holds no PEM certificate", ca)
		}
		c.tls.RootCAs = pool
	}
	return nil
}

func allowedKeys() string {
	keys := make([]string, 0, len(tcpKeys))
	for k, what := range tcpKeys {
		keys = append(keys, k+" ("+what+")")
	}
	sort.Strings(keys)
	return strings.Join(keys, "; ")
}

// refusedError is the receiver turning the connection away: retrying
// cannot help.
type refusedError struct{ reason string }

func (e *refusedError) Error() string { return "the harness refused the stream: " + e.reason }

// maxAnswer bounds the receiver's answer line.
const maxAnswer = 4 << 10

// readAnswer waits up to timeout for the receiver's answer to hello.
func readAnswer(c net.Conn, timeout time.Duration) error {
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	defer c.SetReadDeadline(time.Time{}) //nolint:errcheck // best effort
	line, err := bufio.NewReaderSize(c, maxAnswer).ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("no answer to hello within %s (is the receiver a chaosrun harness of this version?): %w", timeout, err)
	}
	var a wire.Answer
	if err := json.Unmarshal(line, &a); err != nil {
		return fmt.Errorf("unreadable answer to hello %q: %w", line, err)
	}
	switch a.Type {
	case wire.TypeWelcome:
		return nil
	case wire.TypeRefused:
		return &refusedError{reason: a.Error}
	}
	return fmt.Errorf("unexpected answer to hello: %q", line)
}
