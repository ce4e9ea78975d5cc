package client

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestClientConfigFlags(t *testing.T) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.Register(fs)
	fs.SetOutput(io.Discard)
	err := fs.Parse([]string{"--retry-mode", "naive", "--retries", "3", "--retry-budget", "off",
		"--breaker", "off", "--outlier", "off", "--balancer", "p2c", "--deadline-propagation", "off",
		"--outlier-base-ejection", "10s", "--retry-timeouts", "off"})
	if err != nil {
		t.Fatal(err)
	}
	if c.RetryMode != retryNaive || c.Retries != 3 || c.RetryBudget != 0 || c.Breaker || c.Outlier.Enabled ||
		c.Balancer != balanceP2C || c.PropagateDeadline || c.Outlier.BaseEjection != 10*time.Second || c.RetryTimeouts {
		t.Errorf("flags not applied: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("valid flags: %v", err)
	}
}

func TestClientConfigErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--retry-mode", "eager"}, "--retry-mode"},
		{[]string{"--retry-budget", "2"}, "ratio"},
		{[]string{"--breaker", "yes"}, "on or off"},
		{[]string{"--balancer", "random"}, "--balancer"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		c.Register(fs)
		fs.SetOutput(io.Discard)
		if err := fs.Parse(tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want one mentioning %q", tt.args, err, tt.want)
		}
	}
	bad := []func(*Config){
		func(c *Config) { c.Retries = -1 },
		func(c *Config) { c.RetryBackoffMax = c.RetryBackoff - 1 },
		func(c *Config) { c.BreakerFailureRate = 0 },
		func(c *Config) { c.BreakerMinCalls = 0 },
		func(c *Config) { c.Outlier.MaxEjectionPercent = 200 },
	}
	for i, f := range bad {
		c := DefaultConfig()
		f(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
	if _, err := New("ledger", []string{"a:1"}, time.Second, WithConfig(Config{})); err == nil || !strings.Contains(err.Error(), "ledger") {
		t.Errorf("zero config: err = %v, want an error naming the dependency", err)
	}
}
