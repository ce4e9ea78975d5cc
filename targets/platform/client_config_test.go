package platform

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestClientConfigFlags(t *testing.T) {
	c := DefaultClientConfig()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.Register(fs)
	err := ParseFlags(fs, []string{"--retry-mode", "naive", "--retries", "3", "--retry-budget", "off",
		"--breaker", "off", "--outlier", "off", "--balancer", "p2c", "--deadline-propagation", "off",
		"--outlier-base-ejection", "10s", "--retry-timeouts", "off"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.RetryMode != RetryNaive || c.Retries != 3 || c.RetryBudget != 0 || c.Breaker || c.Outlier.Enabled ||
		c.Balancer != BalanceP2C || c.PropagateDeadline || c.Outlier.BaseEjection != 10*time.Second || c.RetryTimeouts {
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
		c := DefaultClientConfig()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		c.Register(fs)
		if err := ParseFlags(fs, tt.args, io.Discard); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want one mentioning %q", tt.args, err, tt.want)
		}
	}
	bad := []func(*ClientConfig){
		func(c *ClientConfig) { c.Retries = -1 },
		func(c *ClientConfig) { c.RetryBackoffMax = c.RetryBackoff - 1 },
		func(c *ClientConfig) { c.BreakerFailureRate = 0 },
		func(c *ClientConfig) { c.BreakerMinCalls = 0 },
		func(c *ClientConfig) { c.Outlier.MaxEjectionPercent = 200 },
	}
	for i, f := range bad {
		c := DefaultClientConfig()
		f(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
	if _, err := NewClient("ledger", []string{"a:1"}, time.Second, WithConfig(ClientConfig{})); err == nil || !strings.Contains(err.Error(), "ledger") {
		t.Errorf("zero config: err = %v, want an error naming the dependency", err)
	}
}
