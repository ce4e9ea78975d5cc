package native

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/workloads/stream"
)

// Results is where a load process writes its windows: a results receiver
// over TCP, or a results-stream file.
type Results struct {
	// Dial reaches a receiver; nil when File is set.
	Dial *stream.DialConfig
	// File is a results-stream file to write instead.
	File string
}

// resultsKeys are the options of a tcp:// destination, as the
// xk6-resilience output takes them (the token comes from the environment).
var resultsKeys = []string{"tls", "ca", "server_name"}

// connectWait is how long a load process keeps trying to reach its
// receiver: a Pod may start before the judging side listens.
const connectWait = 30 * time.Second

// ParseResults reads a destination: tcp://HOST:PORT[?tls=true&ca=FILE&server_name=NAME]
// (the k6 output's form) or a file path. token is the run's token
// (sent in the hello); readFile reads the CA file.
func ParseResults(arg, token string, readFile func(string) ([]byte, error)) (Results, error) {
	rest, ok := strings.CutPrefix(arg, "tcp://")
	if !ok {
		if arg == "" || strings.Contains(arg, "://") {
			return Results{}, fmt.Errorf("results %q: want tcp://HOST:PORT[?tls=true&ca=FILE&server_name=NAME] or a file path", arg)
		}
		return Results{File: arg}, nil
	}
	addr, query, _ := strings.Cut(rest, "?")
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return Results{}, fmt.Errorf("results %q: want tcp://HOST:PORT", arg)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Results{}, fmt.Errorf("results %q: options: %w", arg, err)
	}
	for k := range q {
		if k == "token" {
			return Results{}, fmt.Errorf("results %q: the token goes in the environment (CHAOSRUN_RESULTS_TOKEN), not on a command line every user can read", arg)
		}
		if !slices.Contains(resultsKeys, k) {
			return Results{}, fmt.Errorf("results %q: unknown option %q (allowed: %s)", arg, k, strings.Join(resultsKeys, ", "))
		}
	}
	cfg, err := resultsTLS(q, host, readFile)
	if err != nil {
		return Results{}, fmt.Errorf("results %q: %w", arg, err)
	}
	return Results{Dial: &stream.DialConfig{Addr: addr, Token: token, TLS: cfg, Wait: connectWait}}, nil
}

// resultsTLS is the TLS configuration the options ask for; nil for none.
func resultsTLS(q url.Values, host string, readFile func(string) ([]byte, error)) (*tls.Config, error) {
	useTLS := false
	if v := q.Get("tls"); v != "" {
		var err error
		if useTLS, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("tls=%q: want true or false", v)
		}
	}
	ca, name := q.Get("ca"), q.Get("server_name")
	if !useTLS && ca == "" && name == "" {
		return nil, nil
	}
	if q.Has("tls") && !useTLS {
		return nil, errors.New("tls=false contradicts ca or server_name")
	}
	if name == "" {
		name = host
	}
	cfg := &tls.Config{ServerName: name, MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := readFile(ca)
		if err != nil {
			return nil, fmt.Errorf("ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca %s holds no PEM certificate", ca)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// String names the destination in messages.
func (r Results) String() string {
	if r.Dial == nil {
		return r.File
	}
	if r.Dial.TLS != nil {
		return "tcp://" + r.Dial.Addr + " (TLS)"
	}
	return "tcp://" + r.Dial.Addr
}

// open starts the stream of shard: it connects and says hello, naming
// the shard.
func (r Results) open(ctx context.Context, shard Shard) (*stream.Writer, error) {
	h := Hello()
	h.Shard = shard.String()
	if r.Dial == nil {
		return stream.Create(r.File, h)
	}
	return stream.Dial(ctx, *r.Dial, h)
}

// RunTo runs shard of spec to its end (or ctx's) writing its windows to
// res, which it ends: the end marker goes out on an interrupt too. A
// spec or shard that cannot run is refused before anything connects.
func RunTo(ctx context.Context, spec Spec, shard Shard, res Results) (Summary, error) {
	if shard.Count == 0 {
		shard.Count = 1
	}
	if err := Check(spec, shard); err != nil {
		return Summary{}, err
	}
	out, err := res.open(ctx, shard)
	if err != nil {
		return Summary{}, err
	}
	sum, err := Run(ctx, spec, shard, out)
	if sum.Start.IsZero() {
		err = errors.Join(err, out.Close())
	}
	return sum, err
}

// Check says whether shard of spec can run: the shard is within its
// count, the spec valid and every stream compiles.
func Check(spec Spec, shard Shard) error {
	if shard.Index < 0 || shard.Index >= max(shard.Count, 1) {
		return fmt.Errorf("native: shard %d of %d: want 0 <= index < count", shard.Index, shard.Count)
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	for i := range spec.Streams {
		if _, err := compileLane(&spec.Streams[i], i, max(shard.Count, 1)); err != nil {
			return fmt.Errorf("native workload: stream %q: %w", spec.Streams[i].Name, err)
		}
	}
	return nil
}
