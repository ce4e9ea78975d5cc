package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/chaosrun/chaosrun/targets/platform"
	"github.com/prometheus/client_golang/prometheus"
)

// Decision stages and outcomes of platform_decisions_total.
const (
	stageDeadline = "deadline"
	stageQuota    = "quota"
	stageBulkhead = "bulkhead"
	stageQueue    = "queue"
)

// decisionCounters are the admission path's counters, resolved once.
type decisionCounters struct {
	deadlineNone, deadlineOK, deadlineArrival, deadlineQueued, deadlineWasted prometheus.Counter
	quotaOff, quotaAdmit, quotaReject, quotaWould, quotaError                 prometheus.Counter
	bulkAdmit, bulkReject, bulkShed, bulkWould                                prometheus.Counter
	queueNow, queueWaited, queueCodel, queueBP, queueFull, queueTimeout       prometheus.Counter
	queueCanceled, queueDeadline                                              prometheus.Counter
	wasted                                                                    prometheus.Counter
}

func newDecisionCounters(x *admissionMetrics) decisionCounters {
	c := func(stage, decision string) prometheus.Counter { return x.Decisions.WithLabelValues(stage, decision) }
	return decisionCounters{
		deadlineNone: c(stageDeadline, "none"), deadlineOK: c(stageDeadline, "in-time"),
		deadlineArrival: c(stageDeadline, "expired-on-arrival"), deadlineQueued: c(stageDeadline, "expired-in-queue"),
		deadlineWasted: c(stageDeadline, "expired-started-anyway"),
		quotaOff:       c(stageQuota, "off"), quotaAdmit: c(stageQuota, "admit"), quotaReject: c(stageQuota, "reject"),
		quotaWould: c(stageQuota, "would-reject"),
		quotaError: c(stageQuota, "error-fail-open"),
		bulkAdmit:  c(stageBulkhead, "admit"), bulkReject: c(stageBulkhead, "reject"), bulkShed: c(stageBulkhead, "shed"),
		bulkWould: c(stageBulkhead, "would-reject"),
		queueNow:  c(stageQueue, "admit-now"), queueWaited: c(stageQueue, "admit-after-wait"), queueCodel: c(stageQueue, platform.ReasonCodel),
		queueBP: c(stageQueue, platform.ReasonBackpressure), queueFull: c(stageQueue, platform.ReasonQueueFull),
		queueTimeout: c(stageQueue, platform.ReasonQueueTimeout), queueCanceled: c(stageQueue, "canceled"),
		queueDeadline: c(stageQueue, platform.ReasonDeadline),
		wasted:        x.WastedWork,
	}
}

// poolObserver mirrors the pool's state in gauges after each decision.
func poolObserver(x *admissionMetrics) func(*pool) {
	return func(p *pool) {
		st := p.stateLocked()
		x.QueueLength.Set(float64(st.Queued))
		x.Overloaded.Set(b2f(st.Overloaded))
		x.Backpressure.Set(b2f(st.Backpress))
		x.CodelMinDelay.Set(st.MinDelay.Seconds())
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func otherMode(m QueueMode) QueueMode {
	if m == QueueCodel {
		return QueueFIFO
	}
	return QueueCodel
}

// admit is the admission path in front of h: deadline on arrival, quota,
// the API's bulkhead, the worker pool's queue, the deadline again at start.
func (s *Server) admit(route string, h http.Handler, opts RouteOptions) http.Handler {
	m := s.metrics
	dur := m.requestDuration.WithLabelValues(route)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.cfg.Clock()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			m.requests.WithLabelValues(route, strconv.Itoa(rec.code)).Inc()
			dur.Observe(s.cfg.Clock().Sub(start).Seconds())
		}()
		ctx := r.Context()

		// 1. The caller's deadline.
		var deadline time.Time
		if v := r.Header.Get(platform.HeaderDeadline); v != "" {
			at, err := platform.ParseDeadline(v, start)
			if err != nil {
				platform.WriteError(rec, http.StatusBadRequest, "bad-request", fmt.Sprintf("%s: %v", s.name, err))
				return
			}
			deadline = at
			var cancel context.CancelFunc
			ctx, cancel = platform.WithCallerDeadline(ctx, at, s.cfg.Deadlines)
			defer cancel()
			r = r.WithContext(ctx)
			if s.cfg.Deadlines && expired(at, start) {
				s.dec.deadlineArrival.Inc()
				s.reject(rec, http.StatusGatewayTimeout, platform.ReasonDeadline,
					fmt.Sprintf("%s: the caller's deadline (%s %s) had passed on arrival", s.name, platform.HeaderDeadline, v))
				return
			}
		} else {
			s.dec.deadlineNone.Inc()
		}

		// 2. The caller's quota.
		if !s.quota(rec, r) {
			return
		}

		// 3. The API's bulkhead.
		if opts.Bulkhead != nil {
			rel, ok := s.bulkhead(rec, r, opts.Bulkhead)
			if !ok {
				return
			}
			defer rel()
		}

		// 4. A worker, through the queue.
		release, waited, err := s.workers.acquire(ctx)
		m.queueWait.Observe(waited.Seconds())
		if err != nil {
			s.queueRefused(rec, err, ctx, deadline)
			return
		}
		defer release()
		if waited == 0 {
			s.dec.queueNow.Inc()
		} else {
			s.dec.queueWaited.Inc()
		}

		// 5. The deadline again, as the work starts.
		if !deadline.IsZero() && !s.startInTime(rec, deadline, waited) {
			return
		}
		m.inflight.Inc()
		defer m.inflight.Dec()
		h.ServeHTTP(rec, r)
	})
}

// bulkhead takes a permit of the API's bulkhead b for r; if it may not go
// on, it has answered 503.
func (s *Server) bulkhead(w http.ResponseWriter, r *http.Request, b ConcurrencyLimit) (release func(), ok bool) {
	rel, d := b.acquireFor(r.Header.Get(platform.HeaderCriticality) == platform.CriticalitySheddable)
	switch d {
	case admitted:
		s.dec.bulkAdmit.Inc()
	case wouldReject:
		s.dec.bulkWould.Inc()
	case shed:
		s.dec.bulkShed.Inc()
	case rejected:
		s.dec.bulkReject.Inc()
	}
	if !d.ok() {
		s.reject(w, http.StatusServiceUnavailable, platform.ReasonBulkhead,
			fmt.Sprintf("%s: bulkhead %s: %s", s.name, b.Name(), d))
		return nil, false
	}
	return rel, true
}

// startInTime judges the caller's deadline as the work starts after waited
// in the queue: past it, the request is refused with 504 when deadlines are
// enforced (false), else counted as wasted work.
func (s *Server) startInTime(w http.ResponseWriter, deadline time.Time, waited time.Duration) bool {
	if !expired(deadline, s.cfg.Clock()) {
		s.dec.deadlineOK.Inc()
		return true
	}
	if s.cfg.Deadlines {
		s.dec.deadlineQueued.Inc()
		s.reject(w, http.StatusGatewayTimeout, platform.ReasonDeadline,
			fmt.Sprintf("%s: the caller's deadline passed after %s in the queue", s.name, waited.Round(time.Millisecond)))
		return false
	}
	s.dec.deadlineWasted.Inc()
	s.dec.wasted.Inc()
	return true
}

// queueRefused answers a request the pool gave no worker.
func (s *Server) queueRefused(w http.ResponseWriter, err error, ctx context.Context, deadline time.Time) {
	switch {
	case errors.Is(err, errCodel):
		s.dec.queueCodel.Inc()
		s.reject(w, http.StatusServiceUnavailable, platform.ReasonCodel, fmt.Sprintf("%s: %v", s.name, err))
	case errors.Is(err, errBackpressure):
		s.dec.queueBP.Inc()
		w.Header().Set(platform.HeaderBackpressure, "1")
		w.Header().Set(platform.HeaderRetryAfter, "1")
		s.reject(w, http.StatusServiceUnavailable, platform.ReasonBackpressure,
			fmt.Sprintf("%s: queue overloaded; back off and retry after 1s", s.name))
	case errors.Is(err, errQueueFull):
		s.dec.queueFull.Inc()
		s.reject(w, http.StatusServiceUnavailable, platform.ReasonQueueFull,
			fmt.Sprintf("%s: all %d workers busy and %d requests queued", s.name, s.workers.size(), s.cfg.QueueLength))
	case errors.Is(err, errQueueTimeout):
		s.dec.queueTimeout.Inc()
		s.reject(w, http.StatusServiceUnavailable, platform.ReasonQueueTimeout,
			fmt.Sprintf("%s: all %d workers busy for %s", s.name, s.workers.size(), s.cfg.QueueTimeout))
	case s.cfg.Deadlines && !deadline.IsZero() && errors.Is(err, context.DeadlineExceeded) &&
		errors.Is(context.Cause(ctx), context.DeadlineExceeded) && expired(deadline, s.cfg.Clock()):
		s.dec.queueDeadline.Inc()
		s.reject(w, http.StatusGatewayTimeout, platform.ReasonDeadline,
			fmt.Sprintf("%s: the caller's deadline passed while queued", s.name))
	default: // the caller went away while queued; nobody reads an answer
		s.dec.queueCanceled.Inc()
		s.metrics.rejected.WithLabelValues("canceled").Inc()
		if rec, ok := w.(*statusRecorder); ok {
			rec.code = 499
		}
	}
}

// reject counts a drop by reason and answers it.
func (s *Server) reject(w http.ResponseWriter, status int, reason, msg string) {
	s.metrics.rejected.WithLabelValues(reason).Inc()
	platform.WriteError(w, status, reason, msg)
}

// quota takes r against its caller's quota and says whether it may go on;
// if not, it has answered 429. A quota in shadow mode only counts.
func (s *Server) quota(w http.ResponseWriter, r *http.Request) bool {
	if !s.cfg.Quotas {
		s.dec.quotaOff.Inc()
		return true
	}
	d := s.quotas.check(r.Context(), r.Header.Get(platform.HeaderCaller))
	s.countQuota(d)
	if d.Allowed || d.Shadow {
		return true
	}
	w.Header().Set(platform.HeaderRetryAfter, retryAfterSeconds(d.RetryAfter))
	s.reject(w, http.StatusTooManyRequests, platform.ReasonQuota,
		fmt.Sprintf("%s: caller %q is over its quota of %g requests/s", s.name, d.Caller, d.Rate))
	return false
}

func (s *Server) countQuota(d quotaDecision) {
	decision := "admit"
	switch {
	case d.Err != nil:
		s.dec.quotaError.Inc()
		s.metrics.server.QuotaErrors.Inc()
		s.log.Warn("quota counter failed; request let through", "target", s.name, "err", d.Err)
	case d.Allowed:
		s.dec.quotaAdmit.Inc()
	case d.Shadow:
		s.dec.quotaWould.Inc()
		decision = "would-reject"
	default:
		s.dec.quotaReject.Inc()
		decision = "reject"
	}
	if d.Rate > 0 {
		label := "other"
		if s.quotas.listed(d.Caller) {
			label = d.Caller
		}
		s.metrics.server.QuotaDecisions.WithLabelValues(label, decision).Inc()
		if decision == "would-reject" {
			s.metrics.server.ShadowRejections.WithLabelValues(limitQuota, label, shadowOverQuota).Inc()
		}
	}
}

// retryAfterSeconds renders d as whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) string {
	secs := int64((d + time.Second - 1) / time.Second)
	return strconv.FormatInt(max(secs, 1), 10)
}

// expired says whether work starting at now is past the deadline at (the
// decision "fail before starting" with deadlines on, "wasted work" with them off).
func expired(at, now time.Time) bool { return !now.Before(at) }
