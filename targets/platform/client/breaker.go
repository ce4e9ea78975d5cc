package client

import (
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
)

// breakerFailure says whether an attempt's error counts against the
// dependency's health: timeouts, connection errors and 5xx other than back
// pressure. A 4xx, back pressure, the caller's own cancellation or a call not
// started for lack of deadline budget do not.
func breakerFailure(_ struct{}, err error) bool {
	de, ok := err.(*DepError)
	if !ok {
		return false
	}
	return attemptOutcome(de) == outcomeFailure
}

// attemptOutcome classifies a failed attempt for outlier detection and the breaker.
func attemptOutcome(de *DepError) outcome {
	switch de.Kind {
	case KindTimeout, KindUnavailable:
		return outcomeFailure
	case KindStatus:
		if de.Status >= 500 && !de.Backpressure {
			return outcomeFailure
		}
		if de.Status >= 500 {
			return outcomeNeutral
		}
		return outcomeSuccess
	}
	return outcomeNeutral
}

// Breaker states as exported in platform_client_breaker_state.
const (
	breakerClosed   = 0
	breakerOpen     = 1
	breakerHalfOpen = 2
)

// newBreaker builds the dependency's circuit breaker (failsafe-go): it opens
// when at least BreakerFailureRate of at least BreakerMinCalls attempts within
// BreakerWindow failed, stays open BreakerDelay, then lets BreakerProbes trial
// attempts through and closes if they all succeed. Returns nil when off.
func newBreaker(cfg *Config, m *depMetrics) circuitbreaker.CircuitBreaker[struct{}] {
	if !cfg.Breaker {
		return nil
	}
	set := func(v float64) func(circuitbreaker.StateChangedEvent) {
		return func(circuitbreaker.StateChangedEvent) { m.breakerState.Set(v) }
	}
	m.breakerState.Set(breakerClosed)
	return circuitbreaker.NewBuilder[struct{}]().
		HandleIf(breakerFailure).
		WithFailureRateThreshold(cfg.BreakerFailureRate, uint(cfg.BreakerMinCalls), cfg.BreakerWindow).
		WithDelay(cfg.BreakerDelay).
		WithSuccessThreshold(uint(cfg.BreakerProbes)).
		OnClose(set(breakerClosed)).
		OnOpen(set(breakerOpen)).
		OnHalfOpen(set(breakerHalfOpen)).
		Build()
}
