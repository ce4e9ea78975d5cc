package platform

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
		want    Config
		wantErr []string // substrings
	}{
		{name: "defaults", args: nil, want: DefaultConfig()},
		{
			name: "all set, double and single dash",
			args: []string{"--listen", "127.0.0.1:9000", "-workers=8", "--queue-timeout", "250ms",
				"--dep-timeout=2s", "--dep", "ledger=127.0.0.1:1,127.0.0.1:2", "--dep", "vault=127.0.0.1:3", "--dep", "ledger=127.0.0.1:4"},
			want: Config{Listen: "127.0.0.1:9000", Workers: 8, QueueTimeout: 250 * time.Millisecond, DepTimeout: 2 * time.Second,
				Deps: Deps{"ledger": {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:4"}, "vault": {"127.0.0.1:3"}}},
		},
		{name: "unknown flag names it and lists allowed", args: []string{"--wrokers", "3"},
			wantErr: []string{"unknown flag -wrokers", "allowed:", "--workers", "--dep-timeout", "--listen"}},
		{name: "bad dep", args: []string{"--dep", "ledger"}, wantErr: []string{"ledger", "NAME=HOST:PORT"}},
		{name: "dep with scheme", args: []string{"--dep", "ledger=http://127.0.0.1:1"}, wantErr: []string{"want HOST:PORT"}},
		{name: "bad duration", args: []string{"--queue-timeout", "soon"}, wantErr: []string{"queue-timeout", "allowed flags"}},
		{name: "stray argument", args: []string{"extra"}, wantErr: []string{`unexpected argument "extra"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
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

func TestParseFlagsHelp(t *testing.T) {
	c := DefaultConfig()
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
		mod      func(*Config)
		required []string
		wantErr  string
	}{
		{"ok no deps", func(*Config) {}, nil, ""},
		{"ok deps", func(c *Config) { c.Deps["ledger"] = []string{"h:1"} }, []string{"ledger"}, ""},
		{"missing dep", func(*Config) {}, []string{"ledger", "vault"}, "--dep ledger=ADDR is required"},
		{"unknown dep", func(c *Config) { c.Deps["cache"] = []string{"h:1"} }, nil, "--dep cache: unknown dependency; allowed: none"},
		{"zero workers", func(c *Config) { c.Workers = 0 }, nil, "--workers 0"},
		{"zero dep timeout", func(c *Config) { c.DepTimeout = 0 }, nil, "--dep-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
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
