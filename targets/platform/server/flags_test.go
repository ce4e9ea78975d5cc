package server

import (
	"errors"
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    Flags
		wantErr []string // substrings
	}{
		{name: "defaults", args: nil, want: DefaultFlags()},
		{
			name: "all set, double and single dash",
			args: []string{"--listen", "127.0.0.1:9000", "-workers=8", "--queue-timeout", "250ms",
				"--dep-timeout=2s", "--dep", "ledger=127.0.0.1:1,127.0.0.1:2", "--dep", "vault=127.0.0.1:3", "--dep", "ledger=127.0.0.1:4"},
			want: with(func(c *Flags) {
				c.Listen, c.Workers, c.QueueTimeout, c.DepTimeout = "127.0.0.1:9000", 8, 250*time.Millisecond, 2*time.Second
				c.Deps = Deps{"ledger": {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:4"}, "vault": {"127.0.0.1:3"}}
			}),
		},
		{
			name: "admission flags",
			args: []string{"--queue", "fifo", "--queue-length", "32", "--codel-target", "10ms", "--codel-interval", "50ms",
				"--backpressure", "off", "--backpressure-watermark", "4", "--deadlines=off", "--quotas", "off",
				"--quota-default", "100", "--quota", "rogue=10", "--quota", "batch=2.5", "--quota-redis", "127.0.0.1:6379",
				"--admin-token", "s3cret"},
			want: with(func(c *Flags) {
				c.Queue, c.QueueLength, c.CodelTarget, c.CodelInterval = QueueFIFO, 32, 10*time.Millisecond, 50*time.Millisecond
				c.Backpressure, c.BackpressureWatermark, c.Deadlines, c.Quotas = false, 4, false, false
				c.QuotaDefault, c.Quota, c.QuotaRedis, c.AdminToken = 100, QuotaFlag{"rogue": 10, "batch": 2.5}, "127.0.0.1:6379", "s3cret"
			}),
		},
		{name: "quotas in shadow mode", args: []string{"--quotas", "shadow", "--quota", "rogue=10"},
			want: with(func(c *Flags) { c.Quotas, c.QuotaShadow, c.Quota = true, []string{ShadowAll}, QuotaFlag{"rogue": 10} })},
		{name: "one quota in shadow mode", args: []string{"--quota-shadow", "rogue", "--quotas", "shadow", "--quotas", "on"},
			want: with(func(c *Flags) { c.Quotas, c.QuotaShadow = true, []string{"rogue"} })},
		{name: "bad quotas mode", args: []string{"--quotas", "watch"}, wantErr: []string{"want on, shadow or off"}},
		{name: "empty quota shadow", args: []string{"--quota-shadow", " "}, wantErr: []string{"want a caller name"}},
		{name: "bad queue mode", args: []string{"--queue", "lifo"}, wantErr: []string{`queue mode "lifo": want codel or fifo`}},
		{name: "bad on/off", args: []string{"--deadlines", "yes"}, wantErr: []string{"want on or off"}},
		{name: "bad quota", args: []string{"--quota", "rogue"}, wantErr: []string{"CALLER=REQUESTS_PER_SECOND"}},
		{name: "negative quota", args: []string{"--quota", "rogue=-1"}, wantErr: []string{"want a number ≥ 0"}},
		{name: "unknown flag names it and lists allowed", args: []string{"--wrokers", "3"},
			wantErr: []string{"unknown flag -wrokers", "allowed:", "--workers", "--dep-timeout", "--listen"}},
		{name: "bad dep", args: []string{"--dep", "ledger"}, wantErr: []string{"ledger", "NAME=HOST:PORT"}},
		{name: "dep with scheme", args: []string{"--dep", "ledger=http://127.0.0.1:1"}, wantErr: []string{"want HOST:PORT"}},
		{name: "bad duration", args: []string{"--queue-timeout", "soon"}, wantErr: []string{"queue-timeout", "allowed flags"}},
		{name: "stray argument", args: []string{"extra"}, wantErr: []string{`unexpected argument "extra"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultFlags()
			fs := flag.NewFlagSet("chaosrun serve test", flag.ContinueOnError)
			c.Register(fs)
			err := ParseFlags(fs, tt.args, io.Discard)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, want one containing %q", tt.wantErr)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(c, tt.want) {
				t.Errorf("config = %+v, want %+v", c, tt.want)
			}
		})
	}
}

func with(mod func(*Flags)) Flags {
	c := DefaultFlags()
	mod(&c)
	return c
}

func TestParseFlagsHelp(t *testing.T) {
	c := DefaultFlags()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	c.Register(fs)
	var out strings.Builder
	if err := ParseFlags(fs, []string{"-h"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(out.String(), "-queue-timeout") {
		t.Errorf("usage lacks -queue-timeout:\n%s", out.String())
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		mod      func(*Flags)
		required []string
		wantErr  string
	}{
		{"ok no deps", func(*Flags) {}, nil, ""},
		{"ok deps", func(c *Flags) { c.Deps["ledger"] = []string{"h:1"} }, []string{"ledger"}, ""},
		{"missing dep", func(*Flags) {}, []string{"ledger", "vault"}, "--dep ledger=ADDR is required"},
		{"unknown dep", func(c *Flags) { c.Deps["cache"] = []string{"h:1"} }, nil, "--dep cache: unknown dependency; allowed: none"},
		{"zero workers", func(c *Flags) { c.Workers = 0 }, nil, "--workers 0"},
		{"zero dep timeout", func(c *Flags) { c.DepTimeout = 0 }, nil, "--dep-timeout"},
		{"negative queue length", func(c *Flags) { c.QueueLength = -1 }, nil, "--queue-length -1"},
		{"zero codel target", func(c *Flags) { c.CodelTarget = 0 }, nil, "--codel-target 0s"},
		{"negative watermark", func(c *Flags) { c.BackpressureWatermark = -2 }, nil, "--backpressure-watermark -2"},
		{"negative default quota", func(c *Flags) { c.QuotaDefault = -1 }, nil, "quota default: rate -1"},
		{"bad redis address", func(c *Flags) { c.QuotaRedis = "localhost" }, nil, `--quota-redis "localhost": want HOST:PORT`},
		{"off loopback without token", func(c *Flags) { c.Listen = "0.0.0.0:8080" }, nil, "--listen 0.0.0.0:8080: off loopback the admin endpoints need a token"},
		{"off loopback with token", func(c *Flags) { c.Listen, c.AdminToken = "0.0.0.0:8080", "t" }, nil, ""},
		{"ipv6 loopback", func(c *Flags) { c.Listen = "[::1]:0" }, nil, ""},
		{"localhost", func(c *Flags) { c.Listen = "localhost:0" }, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultFlags()
			tt.mod(&c)
			err := c.Validate(tt.required...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
