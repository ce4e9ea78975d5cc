package client

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestClientConfigDefaults(t *testing.T) {
	c := DefaultConfig()
	if c.Balancer != balanceEWMA || c.BalancerDecay != 10*time.Second || c.Outlier.LatencyFactor != 3 {
		t.Errorf("defaults: balancer %s decay %s latency factor %g; want ewma, 10s, 3", c.Balancer, c.BalancerDecay, c.Outlier.LatencyFactor)
	}
}

func TestClientConfigFlags(t *testing.T) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.Register(fs)
	fs.SetOutput(io.Discard)
	err := fs.Parse([]string{"--retry-mode", "naive", "--retries", "3", "--retry-budget", "off",
		"--breaker", "off", "--outlier", "off", "--balancer", "p2c", "--deadline-propagation", "off",
		"--outlier-base-ejection", "10s", "--retry-timeouts", "off", "--balancer-decay", "5s",
		"--outlier-latency-factor", "4", "--outlier-latency-volume", "10", "--outlier-latency-floor", "20ms"})
	if err != nil {
		t.Fatal(err)
	}
	if c.RetryMode != retryNaive || c.Retries != 3 || c.RetryBudget != 0 || c.Breaker || c.Outlier.Enabled ||
		c.Balancer != balanceP2C || c.PropagateDeadline || c.Outlier.BaseEjection != 10*time.Second || c.RetryTimeouts ||
		c.BalancerDecay != 5*time.Second || c.Outlier.LatencyFactor != 4 || c.Outlier.LatencyVolume != 10 ||
		c.Outlier.LatencyFloor != 20*time.Millisecond {
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
		func(c *Config) { c.BalancerDecay = 0 },
		func(c *Config) { c.Outlier.LatencyFactor = 1 },
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
