// Command app is the items API of the Compose project: an HTTP service in
// front of PostgreSQL with a Redis cache, (`app worker`) the worker that
// consumes the item events the API queues in Redis, and (`app migrate`)
// the job that creates the schema and exits.
//
// It is configured the twelve-factor way: DATABASE_URL, or POSTGRES_HOST,
// POSTGRES_PORT, POSTGRES_USER, POSTGRES_DB with the password in
// POSTGRES_PASSWORD_FILE (a Compose secret); REDIS_ADDR; DB_TIMEOUT, the
// bound on each database call (0 waits as long as the database takes);
// PORT (the worker serves only /healthz there).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	check := flag.Bool("healthcheck", false, "exit 0 when the API on $PORT answers /healthz (the container's health check)")
	flag.Parse()
	if *check {
		os.Exit(healthCheck())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg, err := loadConfig()
	if err != nil {
		log.Fatal(err)
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer st.close()
	if flag.Arg(0) == "migrate" {
		log.Print("schema ready") // openStore created it
		return
	}
	if flag.Arg(0) == "worker" {
		go serve(ctx, cfg, healthOnly()) //nolint:errcheck // the worker's work is the queue; /healthz is for its health check
		err = st.work(ctx)
	} else {
		if admin := os.Getenv("ADMIN_PORT"); admin != "" {
			go serve(ctx, config{port: admin}, healthOnly()) //nolint:errcheck // the admin port answers /healthz
		}
		err = serve(ctx, cfg, routes(st))
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// config is the service's settings from the environment.
type config struct {
	dsn, redisAddr, port string
	// dbTimeout bounds each read (DB_TIMEOUT), writeTimeout each write
	// (WRITE_TIMEOUT): a write waits longer than a read that has a cached
	// copy to fall back on.
	dbTimeout, writeTimeout time.Duration
}

func loadConfig() (config, error) {
	c := config{redisAddr: getenv("REDIS_ADDR", "localhost:6379"), port: getenv("PORT", "8080")}
	var err error
	if c.dbTimeout, err = time.ParseDuration(getenv("DB_TIMEOUT", "250ms")); err != nil {
		return c, fmt.Errorf("DB_TIMEOUT: %w", err)
	}
	if c.writeTimeout, err = time.ParseDuration(getenv("WRITE_TIMEOUT", "2s")); err != nil {
		return c, fmt.Errorf("WRITE_TIMEOUT: %w", err)
	}
	if c.dsn = os.Getenv("DATABASE_URL"); c.dsn != "" {
		return c, nil
	}
	pw := os.Getenv("POSTGRES_PASSWORD")
	if f := os.Getenv("POSTGRES_PASSWORD_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return c, fmt.Errorf("POSTGRES_PASSWORD_FILE: %w", err)
		}
		pw = strings.TrimSpace(string(b))
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(getenv("POSTGRES_USER", "postgres"), pw),
		Host: getenv("POSTGRES_HOST", "localhost") + ":" + getenv("POSTGRES_PORT", "5432"),
		Path: "/" + getenv("POSTGRES_DB", "postgres"), RawQuery: "sslmode=disable"}
	c.dsn = u.String()
	return c, nil
}

func serve(ctx context.Context, cfg config, h http.Handler) error {
	srv := &http.Server{Addr: ":" + cfg.port, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx) //nolint:errcheck // best effort on the way out
	}()
	log.Printf("listening on :%s (DB_TIMEOUT %s, WRITE_TIMEOUT %s)", cfg.port, cfg.dbTimeout, cfg.writeTimeout)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func healthCheck() int {
	c := http.Client{Timeout: 2 * time.Second}
	res, err := c.Get("http://127.0.0.1:" + getenv("PORT", "8080") + "/healthz")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
