package bankservice

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/chaosrun/chaosrun/targets/platform/client"
	"github.com/chaosrun/chaosrun/targets/platform/server"
)

// errBulkhead says a bulkhead was full.
type errBulkhead struct{ b *server.Bulkhead }

func (e errBulkhead) Error() string {
	return fmt.Sprintf("%s bulkhead full (%d concurrent calls)", e.b.Name(), e.b.Limit())
}

// failureAnswer is the status and reason the bank answers for a failed call.
type failureAnswer struct {
	Status int
	Reason string
}

// classify maps a failure to the bank's answer: a full bulkhead is 503 bulkhead,
// an open breaker 503 breaker, a dependency's back pressure 503 backpressure
// (passed on, with Retry-After), a dependency timeout 504, a spent deadline
// 504 deadline, a dependency's 4xx is passed on with its reason, any other
// dependency failure is 502.
func classify(err error) failureAnswer {
	var bh errBulkhead
	if errors.As(err, &bh) {
		return failureAnswer{http.StatusServiceUnavailable, platform.ReasonBulkhead}
	}
	if errors.Is(err, errPending) {
		return failureAnswer{http.StatusConflict, reasonReversed}
	}
	var de *client.DepError
	if !errors.As(err, &de) {
		return failureAnswer{http.StatusInternalServerError, "internal"}
	}
	switch de.Kind {
	case client.KindTimeout:
		return failureAnswer{http.StatusGatewayTimeout, platform.ReasonDependencyTimeout}
	case client.KindDeadline:
		return failureAnswer{http.StatusGatewayTimeout, platform.ReasonDeadline}
	case client.KindBreaker:
		return failureAnswer{http.StatusServiceUnavailable, platform.ReasonBreaker}
	case client.KindStatus:
		if de.Backpressure {
			return failureAnswer{http.StatusServiceUnavailable, platform.ReasonBackpressure}
		}
		if de.Status >= 400 && de.Status < 500 && de.Body.Reason != "" {
			return failureAnswer{de.Status, de.Body.Reason}
		}
	case client.KindCanceled:
		return failureAnswer{499, "canceled"} // the caller is gone; nobody reads this
	}
	return failureAnswer{http.StatusBadGateway, platform.ReasonDependencyError}
}

// fail writes the answer for err.
func (b *bank) fail(w http.ResponseWriter, err error) {
	a := classify(err)
	msg := err.Error()
	var de *client.DepError
	if errors.As(err, &de) {
		if a.Status < 500 && de.Body.Error != "" && err == error(de) {
			msg = de.Dep + ": " + de.Body.Error // a business refusal: the dependency's own words
		}
		if a.Reason == platform.ReasonBackpressure {
			w.Header().Set(platform.HeaderBackpressure, "1")
			w.Header().Set(platform.HeaderRetryAfter, strconv.FormatInt(max(int64((de.RetryAfter+time.Second-1)/time.Second), 1), 10))
		}
	}
	platform.WriteError(w, a.Status, a.Reason, msg)
}
