package client

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
)

// Retry modes (--retry-mode).
const (
	// retrySmart retries only failures that are safe and likely to pass on
	// another try (connection errors, timeouts, 502, 504, 503 without back
	// pressure), never a back-pressure answer, with exponential backoff and
	// full jitter, within a retry budget and the call's deadline.
	retrySmart = "smart"
	// retryNaive is the anti-pattern kept for A/B runs: up to --retries retries
	// of any 5xx, timeout or connection error, back pressure included, at once,
	// with no budget.
	retryNaive = "naive"
	// retryOff makes one attempt per call.
	retryOff = "off"
)

// parseRetryMode checks a --retry-mode value.
func parseRetryMode(s string) (string, error) {
	switch s {
	case retrySmart, retryNaive, retryOff:
		return s, nil
	}
	return "", fmt.Errorf("--retry-mode %q: want %s, %s or %s", s, retrySmart, retryNaive, retryOff)
}

// minRetryBudget is the least deadline budget worth starting a retry with.
const minRetryBudget = time.Millisecond

// retryable says whether a failed attempt may be retried in mode (before the
// budget and deadline are consulted). Nothing that is not a *DepError is.
func retryable(mode string, retryTimeouts bool, de *DepError) bool {
	switch de.Kind {
	case KindUnavailable:
		return mode != retryOff
	case KindTimeout:
		return mode == retryNaive || (mode == retrySmart && retryTimeouts)
	case KindStatus:
		switch mode {
		case retryNaive:
			return de.Status >= 500
		case retrySmart:
			switch de.Status {
			case http.StatusBadGateway, http.StatusGatewayTimeout:
				return true
			case http.StatusServiceUnavailable:
				return !de.Backpressure
			}
		}
	}
	return false // canceled, deadline, breaker open, 4xx, 500
}

// fullJitter is the backoff before retry number n (1-based): a uniform draw
// in [0, min(max, base·2^(n-1))] ("full jitter", as AWS recommends). u is a
// uniform draw in [0, 1).
func fullJitter(base, maxDelay time.Duration, n int, u float64) time.Duration {
	if base <= 0 {
		return 0
	}
	ceil := base
	for k := 1; k < n && ceil < maxDelay; k++ {
		ceil *= 2
	}
	ceil = min(ceil, maxDelay)
	return time.Duration(u * float64(ceil+1))
}

// retryDecider holds what a retry decision needs; shouldRetry is the retry
// policy's failure predicate.
type retryDecider struct {
	cfg     *Config
	budget  *retryBudget // nil: no budget
	now     func() time.Time
	metrics *depMetrics
}

// shouldRetry decides on one failed attempt. Returning true marks the attempt
// a failure the policy retries (unless --retries are used up); false ends the
// call with this error. A retry is withdrawn from the budget only when one
// will really be made.
func (d *retryDecider) shouldRetry(_ struct{}, err error) bool {
	de, ok := err.(*DepError)
	if !ok || !retryable(d.cfg.RetryMode, d.cfg.RetryTimeouts, de) {
		return false
	}
	if de.Attempts > d.cfg.Retries {
		return true // the policy stops here: retries exceeded
	}
	if d.cfg.RetryMode == retryNaive {
		d.metrics.retries.Inc()
		return true
	}
	now := d.now()
	if !de.deadline.IsZero() && de.deadline.Sub(now) < minRetryBudget {
		return false
	}
	if d.budget != nil && !d.budget.tryRetry(now) {
		de.RetryDenied = true
		d.metrics.retriesDenied.Inc()
		return false
	}
	d.metrics.retries.Inc()
	return true
}

// delay is the retry policy's delay function: full jitter in smart mode,
// none in naive mode.
func (d *retryDecider) delay(exec failsafe.ExecutionAttempt[struct{}]) time.Duration {
	if d.cfg.RetryMode != retrySmart {
		return 0
	}
	return fullJitter(d.cfg.RetryBackoff, d.cfg.RetryBackoffMax, exec.Attempts(), rand.Float64())
}

// retryPolicy builds the failsafe retry policy for cfg, or nil when retries are off.
func (d *retryDecider) retryPolicy() retrypolicy.RetryPolicy[struct{}] {
	if d.cfg.RetryMode == retryOff || d.cfg.Retries == 0 {
		return nil
	}
	return retrypolicy.NewBuilder[struct{}]().
		HandleIf(d.shouldRetry).
		WithMaxRetries(d.cfg.Retries).
		WithDelayFunc(d.delay).
		ReturnLastFailure().
		Build()
}
