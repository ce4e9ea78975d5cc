package platform

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Config holds the flags every target shares.
type Config struct {
	// Listen is the address to listen on; port 0 lets the kernel pick.
	Listen string
	// Deps says where each dependency's replicas live.
	Deps Deps
	// Workers is how many requests may execute at once (server-wide).
	Workers int
	// QueueTimeout is how long a request may wait for a worker before a 503.
	QueueTimeout time.Duration
	// DepTimeout bounds each call to a dependency.
	DepTimeout time.Duration
}

// DefaultConfig returns the defaults documented on the flags.
func DefaultConfig() Config {
	return Config{
		Listen:       "127.0.0.1:0",
		Deps:         Deps{},
		Workers:      64,
		QueueTimeout: time.Second,
		DepTimeout:   5 * time.Second,
	}
}

// Register adds the common flags to fs, with c's current values as defaults.
func (c *Config) Register(fs *flag.FlagSet) {
	if c.Deps == nil {
		c.Deps = Deps{}
	}
	fs.StringVar(&c.Listen, "listen", c.Listen, "address to listen on (host:port; port 0 picks a free port)")
	fs.Var(c.Deps, "dep", "dependency location NAME=ADDR[,ADDR...] (repeatable; several addresses are replicas)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "requests that may execute at once, server-wide")
	fs.DurationVar(&c.QueueTimeout, "queue-timeout", c.QueueTimeout, "longest wait for a worker before 503 queue-timeout")
	fs.DurationVar(&c.DepTimeout, "dep-timeout", c.DepTimeout, "timeout of each call to a dependency")
}

// Validate checks the common values and that the dependencies named are exactly
// the ones required (none missing, none unknown).
func (c *Config) Validate(required ...string) error {
	if c.Workers < 1 {
		return fmt.Errorf("--workers %d: must be at least 1", c.Workers)
	}
	if c.QueueTimeout < 0 {
		return fmt.Errorf("--queue-timeout %s: must not be negative", c.QueueTimeout)
	}
	if c.DepTimeout <= 0 {
		return fmt.Errorf("--dep-timeout %s: must be positive", c.DepTimeout)
	}
	allowed := "none"
	if len(required) > 0 {
		allowed = strings.Join(required, ", ")
	}
	for name := range c.Deps {
		if !contains(required, name) {
			return fmt.Errorf("--dep %s: unknown dependency; allowed: %s", name, allowed)
		}
	}
	for _, name := range required {
		if len(c.Deps[name]) == 0 {
			return fmt.Errorf("--dep %s=ADDR is required (dependencies needed: %s)", name, allowed)
		}
	}
	return nil
}

// ServerConfig returns the part of c the Server needs.
func (c *Config) ServerConfig() ServerConfig {
	return ServerConfig{Listen: c.Listen, Workers: c.Workers, QueueTimeout: c.QueueTimeout}
}

// ParseFlags parses args into fs. An unknown flag yields an error that names it and
// lists the allowed flags; stray positional arguments are an error too. On -h/--help
// it writes the usage to usage and returns flag.ErrHelp.
func ParseFlags(fs *flag.FlagSet, args []string, usage io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(usage)
		fmt.Fprintf(usage, "usage of %s:\n", fs.Name())
		fs.PrintDefaults()
		return err
	case err != nil:
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
			return fmt.Errorf("%s: unknown flag %s; allowed: %s", fs.Name(), name, allowedFlags(fs))
		}
		return fmt.Errorf("%s: %s; allowed flags: %s", fs.Name(), msg, allowedFlags(fs))
	case fs.NArg() > 0:
		return fmt.Errorf("%s: unexpected argument %q; it takes flags only: %s", fs.Name(), fs.Arg(0), allowedFlags(fs))
	}
	return nil
}

func allowedFlags(fs *flag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
