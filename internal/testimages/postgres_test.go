package testimages

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/testbed/docker"
	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// TestPostgresServesSQL starts the PostgreSQL image as a Compose file
// configures it (user, database, password file) and checks that it serves
// SQL over TCP with that password, and refuses a wrong one.
func TestPostgresServesSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Docker container")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cli, err := docker.NewClient(ctx)
	if err != nil {
		testenv.Unavailable(t, "no reachable Docker engine: %v", err)
	}
	defer cli.Close()
	root, _ := filepath.Abs("../..")
	if _, err := Postgres(ctx, cli, root, nil); err != nil {
		t.Fatal(err)
	}
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{Started: true, ContainerRequest: testcontainers.ContainerRequest{
		Image:        PostgresRef,
		Env:          map[string]string{"POSTGRES_USER": "items", "POSTGRES_DB": "items", "POSTGRES_PASSWORD_FILE": "/run/secrets/db_password"},
		Files:        []testcontainers.ContainerFile{{Reader: strings.NewReader("s3cret\n"), ContainerFilePath: "/run/secrets/db_password", FileMode: 0o444}},
		ExposedPorts: []string{"5432/tcp"},
		WaitingFor:   wait.ForLog("database system is ready to accept connections").WithStartupTimeout(time.Minute),
	}})
	if ctr != nil {
		t.Cleanup(func() { ctr.Terminate(context.Background()) }) //nolint:errcheck // best effort
	}
	if err != nil {
		t.Fatal(err)
	}
	port, err := ctr.MappedPort(ctx, "5432/tcp")
	if err != nil {
		t.Fatal(err)
	}
	dsn := func(pw string) string {
		return fmt.Sprintf("postgres://items:%s@127.0.0.1:%s/items?sslmode=disable&connect_timeout=5", pw, port.Port())
	}
	if c, err := pgx.Connect(ctx, dsn("wrong")); err == nil {
		c.Close(ctx)
		t.Fatal("a wrong password was let in")
	}
	conn, err := pgx.Connect(ctx, dsn("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	for _, q := range []string{`CREATE TABLE t (v int)`, `INSERT INTO t VALUES (41)`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := conn.QueryRow(ctx, `SELECT v + 1 FROM t`).Scan(&n); err != nil || n != 42 {
		t.Fatalf("SELECT: %d, %v", n, err)
	}
}
