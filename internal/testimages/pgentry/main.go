// Command pgentry is the entrypoint of the PostgreSQL test image, in the
// manner of the official image's docker-entrypoint.sh: run as root, it
// prepares $PGDATA, drops to the postgres user, runs initdb on an empty
// data folder (superuser $POSTGRES_USER, password from $POSTGRES_PASSWORD
// or the file $POSTGRES_PASSWORD_FILE, database $POSTGRES_DB), then execs
// the server. Any command other than "postgres" is exec'd as given.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// bin is where Debian installs PostgreSQL 15's programs; uid and gid are
// those of the image's postgres user.
const (
	bin = "/usr/lib/postgresql/15/bin"
	uid = 999
	gid = 999
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pgentry:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		args = []string{"postgres"}
	}
	if args[0] != "postgres" {
		path, err := exec.LookPath(args[0])
		if err != nil {
			return err
		}
		return syscall.Exec(path, args, os.Environ())
	}
	data := getenv("PGDATA", "/var/lib/postgresql/data")
	if os.Getuid() == 0 {
		if err := prepare(data); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := initdb(data); err != nil {
			return err
		}
	}
	argv := append([]string{bin + "/postgres", "-D", data}, args[1:]...)
	return syscall.Exec(argv[0], argv, os.Environ())
}

// prepare makes the data and socket folders the postgres user's, then
// becomes that user.
func prepare(data string) error {
	for _, d := range []string{data, "/var/run/postgresql"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.Chown(d, uid, gid); err != nil {
			return err
		}
	}
	if err := os.Chmod(data, 0o700); err != nil {
		return err
	}
	if err := os.Chmod("/var/run/postgresql", 0o2775); err != nil {
		return err
	}
	if err := os.MkdirAll("/tmp", 0o1777); err != nil {
		return err
	}
	if err := os.Chmod("/tmp", 0o1777|os.ModeSticky); err != nil {
		return err
	}
	if err := syscall.Setgroups([]int{gid}); err != nil {
		return err
	}
	if err := syscall.Setgid(gid); err != nil {
		return err
	}
	if err := syscall.Setuid(uid); err != nil {
		return err
	}
	return os.Setenv("HOME", "/var/lib/postgresql")
}

// initdb creates the cluster, lets every host in with a password, and
// creates $POSTGRES_DB.
func initdb(data string) error {
	user := getenv("POSTGRES_USER", "postgres")
	db := getenv("POSTGRES_DB", user)
	pw := os.Getenv("POSTGRES_PASSWORD")
	if f := os.Getenv("POSTGRES_PASSWORD_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		pw = strings.TrimRight(string(b), "\r\n")
	}
	if pw == "" {
		return errors.New("the database is uninitialized and no superuser password is given: set POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE")
	}
	pwfile := filepath.Join(os.TempDir(), "pgpass-init")
	if err := os.WriteFile(pwfile, []byte(pw+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	cmd := exec.Command(bin+"/initdb", "-D", data, "-U", user, "--pwfile="+pwfile, "--auth-local=trust",
		"--auth-host=scram-sha-256", "--locale=C", "--encoding=UTF8")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	if err := appendFile(filepath.Join(data, "pg_hba.conf"), "\nhost all all all scram-sha-256\n"); err != nil {
		return err
	}
	if err := appendFile(filepath.Join(data, "postgresql.conf"), "\nlisten_addresses = '*'\n"); err != nil {
		return err
	}
	if db == "postgres" {
		return nil
	}
	single := exec.Command(bin+"/postgres", "--single", "-j", "-D", data, "postgres")
	single.Stdin = strings.NewReader(fmt.Sprintf("CREATE DATABASE %q;\n", db))
	single.Stdout, single.Stderr = os.Stdout, os.Stderr
	if err := single.Run(); err != nil {
		return fmt.Errorf("create database %s: %w", db, err)
	}
	return nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
