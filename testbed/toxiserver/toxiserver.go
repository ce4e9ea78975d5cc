// Package toxiserver runs an embedded Toxiproxy server: `chaosrun serve toxiproxy`.
package toxiserver

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/chaosrun/chaosrun/guard"
	"github.com/chaosrun/chaosrun/testbed/httpstage"
)

// Main serves Toxiproxy's API until ctx ends. It prints
// "listening on http://ADDR" once the API accepts connections.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("toxiproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address of Toxiproxy's API")
	seed := fs.Int64("seed", 0, "seed for Toxiproxy's random choices (toxicity, jitter); 0 = random")
	verbose := fs.Bool("verbose", false, "log every proxy event")
	httpStage := fs.Bool("http-stage", false, "put an HTTP stage behind every proxy created through the API, for http_error and http_latency toxics")
	token := fs.String("token", "", "require this token (HTTP basic auth password, Bearer or ?token=) on the API; required when --listen is not loopback (default $"+guard.AdminTokenEnv+")")
	var proxies []proxySpec
	fs.Func("proxy", "create a proxy at start, as POST /proxies would: NAME=LISTEN=UPSTREAM, e.g. 'bank->vault=0.0.0.0:20000=vault:8080' (repeatable)", func(v string) error {
		p, err := parseProxy(v)
		if err == nil {
			proxies = append(proxies, p)
		}
		return err
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve toxiproxy: unexpected argument %q", fs.Arg(0))
	}
	if *token == "" {
		*token = os.Getenv(guard.AdminTokenEnv)
	}
	if !guard.IsLoopbackListen(*listen) && *token == "" {
		return fmt.Errorf("serve toxiproxy: --listen %s is not a loopback address: set --token (or %s) so that only this run can inject faults", *listen, guard.AdminTokenEnv)
	}
	if *seed != 0 {
		// Toxiproxy draws from the global source; seeding it makes toxicity
		// and jitter replayable (the child runs with GODEBUG=randseednop=0).
		rand.Seed(*seed) //nolint:staticcheck // the library uses the global source
	}
	level := zerolog.WarnLevel
	if *verbose {
		level = zerolog.InfoLevel
	}
	logger := zerolog.New(stderr).Level(level).With().Timestamp().Logger()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("serve toxiproxy: listen on %s: %w", *listen, err)
	}
	var h http.Handler = srv.Routes()
	if *httpStage {
		stages := httpstage.NewAPI(h, "127.0.0.1", *seed)
		defer stages.Close()
		h = stages
	}
	if err := createProxies(h, proxies); err != nil {
		ln.Close()
		srv.Collection.Clear()
		return fmt.Errorf("serve toxiproxy: %w", err)
	}
	if *token != "" {
		h = guard.RequireToken(*token, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("WWW-Authenticate", `Basic realm="chaosrun toxiproxy"`)
			http.Error(w, "chaosrun: this Toxiproxy API needs the run's token", http.StatusUnauthorized)
		}, h)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())

	select {
	case err := <-errc:
		return fmt.Errorf("serve toxiproxy: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = hs.Shutdown(shutdownCtx)
	srv.Collection.Clear()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve toxiproxy: shutdown: %w", err)
	}
	return nil
}
