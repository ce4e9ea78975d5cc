package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
)

// Flags holds the flags every target shares.
type Flags struct {
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

	// Queue is the discipline of the queue in front of the workers.
	Queue QueueMode
	// QueueLength bounds the queue (0: unbounded).
	QueueLength int
	// CodelTarget and CodelInterval are CoDel's knobs.
	CodelTarget, CodelInterval time.Duration
	// Backpressure answers 503 back-pressure while the queue is overloaded.
	Backpressure bool
	// BackpressureWatermark is the queue length below which back pressure ends (0: --workers).
	BackpressureWatermark int
	// Deadlines enforces the caller's X-Deadline-Ms (off: only counts wasted work).
	Deadlines bool
	// Quotas switches per-caller rate quotas on (--quotas on, or shadow).
	Quotas bool
	// QuotaShadow lists the callers whose quota only counts what it would
	// reject (--quota-shadow; ShadowAll: every caller, as --quotas shadow).
	QuotaShadow []string
	// QuotaDefault is the rate quota of callers not listed in Quota (0: unlimited).
	QuotaDefault float64
	// Quota is each listed caller's rate quota.
	Quota QuotaFlag
	// QuotaRedis is the Redis (host:port) that counts quotas across replicas ("": local).
	QuotaRedis string
	// AdminToken guards /admin/ endpoints when set.
	AdminToken string
}

// DefaultFlags returns the defaults documented on the flags.
func DefaultFlags() Flags {
	return Flags{
		Listen:       "127.0.0.1:0",
		Deps:         Deps{},
		Workers:      64,
		QueueTimeout: time.Second,
		DepTimeout:   5 * time.Second,

		Queue:         QueueCodel,
		QueueLength:   256,
		CodelTarget:   defaultCodel.Target,
		CodelInterval: defaultCodel.Interval,
		Backpressure:  true,
		Deadlines:     true,
		Quotas:        true,
		Quota:         QuotaFlag{},
	}
}

// Register adds the common flags to fs, with c's current values as defaults.
func (c *Flags) Register(fs *flag.FlagSet) {
	if c.Deps == nil {
		c.Deps = Deps{}
	}
	fs.StringVar(&c.Listen, "listen", c.Listen, "address to listen on (host:port; port 0 picks a free port)")
	fs.Var(c.Deps, "dep", "dependency location NAME=ADDR[,ADDR...] (repeatable; several addresses are replicas)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "requests that may execute at once, server-wide")
	fs.DurationVar(&c.QueueTimeout, "queue-timeout", c.QueueTimeout, "longest wait for a worker before 503 queue-timeout")
	fs.DurationVar(&c.DepTimeout, "dep-timeout", c.DepTimeout, "timeout of each call to a dependency")
	if c.Quota == nil {
		c.Quota = QuotaFlag{}
	}
	fs.Var((*queueModeFlag)(&c.Queue), "queue", "queue discipline in front of the workers: codel (CoDel + adaptive LIFO) or fifo (bounded FIFO)")
	fs.IntVar(&c.QueueLength, "queue-length", c.QueueLength, "most requests waiting for a worker before 503 queue-full (0: unbounded)")
	fs.DurationVar(&c.CodelTarget, "codel-target", c.CodelTarget, "CoDel target queueing delay; overloaded requests waiting over 2x this fail fast")
	fs.DurationVar(&c.CodelInterval, "codel-interval", c.CodelInterval, "CoDel interval over which the minimum queueing delay is judged")
	fs.Var((*onOff)(&c.Backpressure), "backpressure", "answer 503 with X-Backpressure while the codel queue is overloaded: on or off")
	fs.IntVar(&c.BackpressureWatermark, "backpressure-watermark", c.BackpressureWatermark, "queue length below which back pressure ends (0: --workers)")
	fs.Var((*onOff)(&c.Deadlines), "deadlines", "enforce the caller's X-Deadline-Ms (off: only count wasted work): on or off")
	fs.Var(quotasFlag{&c.Quotas, &c.QuotaShadow}, "quotas", "per-caller rate quotas (X-Caller): on, shadow (count what they would reject, reject nothing) or off")
	fs.Var((*shadowFlag)(&c.QuotaShadow), "quota-shadow", "a caller whose quota only counts what it would reject (repeatable; * for every caller)")
	fs.Float64Var(&c.QuotaDefault, "quota-default", c.QuotaDefault, "requests/s allowed to a caller without its own --quota (0: unlimited)")
	fs.Var(c.Quota, "quota", "a caller's rate quota CALLER=REQUESTS_PER_SECOND (repeatable; 0: unlimited)")
	fs.StringVar(&c.QuotaRedis, "quota-redis", c.QuotaRedis, "Redis host:port counting quotas across replicas (empty: count locally)")
	if c.AdminToken == "" {
		c.AdminToken = os.Getenv(platform.AdminTokenEnv)
	}
	fs.StringVar(&c.AdminToken, "admin-token", c.AdminToken, "bearer token required on /admin/ endpoints (default $"+platform.AdminTokenEnv+"; required when --listen is not loopback)")
}

// onOff is a bool flag spelled on|off.
type onOff bool

func (o *onOff) String() string {
	if o != nil && *o {
		return "on"
	}
	return "off"
}

// Set reads on or off.
func (o *onOff) Set(s string) error {
	switch s {
	case "on":
		*o = true
	case "off":
		*o = false
	default:
		return fmt.Errorf("want on or off, got %q", s)
	}
	return nil
}

// quotasFlag is --quotas: on, shadow (every quota in shadow mode) or off.
type quotasFlag struct {
	on     *bool
	shadow *[]string
}

func (q quotasFlag) String() string {
	switch {
	case q.on == nil || !*q.on:
		return "off"
	case slices.Contains(*q.shadow, ShadowAll):
		return "shadow"
	}
	return "on"
}

func (q quotasFlag) Set(s string) error {
	all := slices.DeleteFunc(*q.shadow, func(c string) bool { return c == ShadowAll })
	switch s {
	case "on", "off":
		*q.on, *q.shadow = s == "on", all
	case "shadow":
		*q.on, *q.shadow = true, append(all, ShadowAll)
	default:
		return fmt.Errorf("want on, shadow or off, got %q", s)
	}
	return nil
}

// shadowFlag is the repeatable --quota-shadow CALLER.
type shadowFlag []string

func (f *shadowFlag) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(*f, ",")
}

func (f *shadowFlag) Set(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return fmt.Errorf("want a caller name (as in %s) or %s", platform.HeaderCaller, ShadowAll)
	}
	*f = append(*f, s)
	return nil
}

type queueModeFlag QueueMode

func (q *queueModeFlag) String() string {
	if q == nil {
		return QueueFIFO.String()
	}
	return QueueMode(*q).String()
}

func (q *queueModeFlag) Set(s string) error {
	m, err := parseQueueMode(s)
	if err != nil {
		return err
	}
	*q = queueModeFlag(m)
	return nil
}

// Validate checks the common values and that the dependencies named are exactly
// the ones required (none missing, none unknown).
func (c *Flags) Validate(required ...string) error {
	if c.AdminToken == "" && !loopbackListen(c.Listen) {
		return fmt.Errorf("--listen %s: off loopback the admin endpoints need a token: set --admin-token or $%s", c.Listen, platform.AdminTokenEnv)
	}
	if c.Workers < 1 {
		return fmt.Errorf("--workers %d: must be at least 1", c.Workers)
	}
	if c.QueueTimeout < 0 {
		return fmt.Errorf("--queue-timeout %s: must not be negative", c.QueueTimeout)
	}
	if c.DepTimeout <= 0 {
		return fmt.Errorf("--dep-timeout %s: must be positive", c.DepTimeout)
	}
	if c.QueueLength < 0 {
		return fmt.Errorf("--queue-length %d: must not be negative (0: unbounded)", c.QueueLength)
	}
	if c.CodelTarget <= 0 || c.CodelInterval <= 0 {
		return fmt.Errorf("--codel-target %s, --codel-interval %s: both must be positive", c.CodelTarget, c.CodelInterval)
	}
	if c.BackpressureWatermark < 0 {
		return fmt.Errorf("--backpressure-watermark %d: must not be negative (0: --workers)", c.BackpressureWatermark)
	}
	if err := c.quotaConfig().validate(); err != nil {
		return fmt.Errorf("--quota-default/--quota: %w", err)
	}
	if c.QuotaRedis != "" {
		if _, port, err := net.SplitHostPort(c.QuotaRedis); err != nil || port == "" {
			return fmt.Errorf("--quota-redis %q: want HOST:PORT", c.QuotaRedis)
		}
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

// Config returns the part of c the Server needs.
func (c *Flags) Config() Config {
	return Config{
		Listen: c.Listen, Workers: c.Workers, QueueTimeout: c.QueueTimeout,
		Queue: c.Queue, QueueLength: c.QueueLength,
		Codel:        CodelParams{Target: c.CodelTarget, Interval: c.CodelInterval},
		Backpressure: c.Backpressure, Watermark: c.BackpressureWatermark,
		Deadlines: c.Deadlines, Quotas: c.Quotas, Quota: c.quotaConfig(), QuotaRedis: c.QuotaRedis,
		AdminToken: c.AdminToken,
	}
}

func (c *Flags) quotaConfig() QuotaConfig {
	q := QuotaConfig{Default: c.QuotaDefault, Callers: map[string]float64{}, Shadow: slices.Clone(c.QuotaShadow)}
	for k, v := range c.Quota {
		q.Callers[k] = v
	}
	return q
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

// loopbackListen reports whether a listen address binds loopback only.
func loopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
