package resilience

import (
	"errors"
	"fmt"
	"net/textproto"
	"strconv"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/models/client"
)

// jsClient is client(model, options).
func (mi *ModuleInstance) jsClient(call sobek.FunctionCall) sobek.Value {
	return mi.newClient(call.Argument(0).String(), call.Argument(1))
}

// modelCtor is naive(options), backoff(options), …
func (mi *ModuleInstance) modelCtor(model string) func(sobek.FunctionCall) sobek.Value {
	return func(call sobek.FunctionCall) sobek.Value { return mi.newClient(model, call.Argument(0)) }
}

// clientCfg reads a client's options over the model's defaults.
func clientCfg(model string, o *opts) client.Config {
	c := client.Defaults(model)
	c.Retries = o.int("retries", c.Retries)
	c.Base = o.dur("base", c.Base)
	c.Cap = o.dur("cap", c.Cap)
	c.BudgetRatio = o.float("budget", c.BudgetRatio)
	c.BudgetWindow = o.dur("budgetWindow", c.BudgetWindow)
	c.Deadline = o.dur("deadline", c.Deadline)
	c.RetryOn = o.ints("retryOn", c.RetryOn)
	bp := o.sub("backpressure")
	c.Backpressure.Statuses = bp.ints("statuses", c.Backpressure.Statuses)
	c.Backpressure.Header = bp.str("header", c.Backpressure.Header)
	c.Backpressure.Value = bp.str("value", c.Backpressure.Value)
	c.Backpressure.RetryAfter = bp.bool("retryAfter", c.Backpressure.RetryAfter)
	br := o.sub("breaker")
	c.BreakerFailures = br.int("failures", c.BreakerFailures)
	c.BreakerCooldown = br.dur("cooldown", c.BreakerCooldown)
	if o.err == nil {
		o.err = firstErr(bp.err, br.err)
	}
	return c
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// jsModelClient is one client object of a script.
type jsModelClient struct {
	mi    *ModuleInstance
	c     *client.Client
	tier  string
	base  map[string]any
	names client.HeaderNames
	stats clientStats
	tags  tagCache
}

func (mi *ModuleInstance) newClient(model string, v sobek.Value) sobek.Value {
	rt := mi.vu.Runtime()
	o := newOpts("resilience."+model+"()", v)
	cfg := clientCfg(model, o)
	names := mi.names
	names.Deadline = o.str("deadlineHeader", names.Deadline)
	names.Criticality = o.str("criticalityHeader", names.Criticality)
	tier := o.str("tier", "")
	var base map[string]any
	if h := o.sub("headers"); h.err == nil {
		base = h.m
	} else {
		o.err = firstErr(o.err, h.err)
	}
	seed := uint64(o.int("seed", 1))
	if o.err != nil {
		common.Throw(rt, o.err)
	}
	mi.seq++
	c, err := client.New(cfg, mixSeed(seed, mi.vuID(), mi.seq))
	if err != nil {
		common.Throw(rt, err)
	}
	jc := &jsModelClient{mi: mi, c: c, tier: tier, base: base, names: names}
	obj := rt.NewObject()
	must(rt, obj.Set("model", model))
	must(rt, obj.Set("request", jc.jsRequest))
	must(rt, obj.Set("stats", jc.jsStats))
	must(rt, obj.Set("breaker", func(sobek.FunctionCall) sobek.Value { return rt.ToValue(c.BreakerState(time.Now())) }))
	return obj
}

// jsRequest is client.request(fn, ...args): it calls fn(attempt, ...args) until the model stops,
// emits the request's metrics and returns fn's last answer.
func (jc *jsModelClient) jsRequest(call sobek.FunctionCall) sobek.Value {
	rt := jc.mi.vu.Runtime()
	fn, ok := sobek.AssertFunction(call.Argument(0))
	if !ok {
		common.Throw(rt, errors.New("client.request(fn): fn must be a function that makes the HTTP call, e.g. (a) => http.get(url, {headers: a.headers})"))
	}
	if jc.mi.vu.State() == nil {
		common.Throw(rt, errors.New("client.request: call it from a VU function (default, setup or a scenario's exec), not the init context"))
	}
	// fn(attempt, ...rest): the rest of request's arguments pass through, so a
	// script can define fn once instead of a closure per request.
	args := make([]sobek.Value, max(len(call.Arguments), 1))
	copy(args[1:], call.Arguments[min(1, len(call.Arguments)):])
	var last sobek.Value = sobek.Undefined()
	cfg := jc.c.Config()
	res, err := jc.c.Do(jc.mi.vu.Context(), func(n int, remaining time.Duration) (client.Outcome, error) {
		args[0] = jc.attemptInfo(rt, n, remaining)
		v, err := fn(sobek.Undefined(), args...)
		if err != nil {
			return client.Outcome{}, err
		}
		last = v
		return classify(rt, cfg.Backpressure, v), nil
	})
	jc.add(res)
	jc.mi.pushRequest(cfg.Model, &jc.tags, res)
	if err != nil {
		panic(err) // a JavaScript exception (or interrupt) from fn: rethrown as is
	}
	if res.Rejected {
		r := rt.NewObject()
		must(rt, r.Set("status", 0))
		must(rt, r.Set("error", "resilience: circuit breaker open"))
		must(rt, r.Set("rejected", true))
		return r
	}
	return last
}

// attemptInfo is the argument of fn: {attempt, remaining, timeout, headers}.
func (jc *jsModelClient) attemptInfo(rt *sobek.Runtime, n int, remaining time.Duration) *sobek.Object {
	a := rt.NewObject()
	h := rt.NewObject()
	for k, v := range jc.base {
		must(rt, h.Set(k, v))
	}
	if remaining > 0 {
		ms := remaining.Milliseconds()
		must(rt, h.Set(jc.names.Deadline, strconv.FormatInt(ms, 10)))
		must(rt, a.Set("remaining", ms))
		must(rt, a.Set("timeout", strconv.FormatInt(max(ms, 1), 10)+"ms"))
	}
	if jc.tier != "" {
		must(rt, h.Set(jc.names.Criticality, jc.tier))
	}
	must(rt, a.Set("attempt", n))
	must(rt, a.Set("headers", h))
	return a
}

func (jc *jsModelClient) add(r client.Result) {
	s := &jc.stats
	s.requests++
	s.attempts += int64(r.Attempts)
	s.retries += int64(r.Retries)
	s.backpressure += int64(r.BackPressure)
	s.giveups += int64(b2f(r.GaveUp))
	s.goodput += int64(b2f(r.Goodput))
	s.rejected += int64(b2f(r.Rejected))
}

// clientStats are one client's totals in one VU.
type clientStats struct {
	requests, attempts, retries, backpressure, giveups, goodput, rejected int64
}

// jsStats is client.stats(): this VU's totals for the client.
func (jc *jsModelClient) jsStats(sobek.FunctionCall) sobek.Value {
	s := jc.stats
	return toJS(jc.mi.vu.Runtime(), map[string]int64{
		"requests": s.requests, "attempts": s.attempts, "retries": s.retries,
		"backpressure": s.backpressure, "giveups": s.giveups, "goodput": s.goodput, "rejected": s.rejected,
	})
}

// classify reads an attempt's answer: a k6 http response (status, headers)
// or a plain status number.
func classify(rt *sobek.Runtime, rule client.BackpressureRule, v sobek.Value) client.Outcome {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return client.Outcome{}
	}
	obj, ok := v.(*sobek.Object)
	if !ok { // a status number (Export would copy a whole object: avoided)
		return client.Outcome{Status: int(v.ToInteger())}
	}
	status := 0
	if s := obj.Get("status"); s != nil && !sobek.IsUndefined(s) {
		status = int(s.ToInteger())
	}
	var headers *sobek.Object
	looked := false
	return rule.Classify(status, func(name string) string {
		if !looked { // only back-pressure statuses need the headers
			looked = true
			if h := obj.Get("headers"); h != nil && !sobek.IsUndefined(h) && !sobek.IsNull(h) {
				headers = h.ToObject(rt)
			}
		}
		if headers == nil {
			return ""
		}
		for _, k := range [...]string{name, textproto.CanonicalMIMEHeaderKey(name)} {
			if hv := headers.Get(k); hv != nil && !sobek.IsUndefined(hv) {
				return hv.String()
			}
		}
		return ""
	})
}

// jsDeadline is deadline(budget, {tier}): a deadline starting now.
func (mi *ModuleInstance) jsDeadline(call sobek.FunctionCall) sobek.Value {
	rt := mi.vu.Runtime()
	d, err := toDuration(call.Argument(0).Export())
	if err != nil || d <= 0 {
		common.Throw(rt, fmt.Errorf("resilience.deadline(%s): want a positive duration (milliseconds or like \"800ms\")", call.Argument(0).String()))
	}
	o := newOpts("resilience.deadline()", call.Argument(1))
	tier := o.str("tier", "")
	if o.err != nil {
		common.Throw(rt, o.err)
	}
	names := mi.names
	end := time.Now().Add(d)
	remaining := func() time.Duration { return max(time.Until(end), 0) }
	obj := rt.NewObject()
	must(rt, obj.Set("remaining", func(sobek.FunctionCall) sobek.Value { return rt.ToValue(remaining().Milliseconds()) }))
	must(rt, obj.Set("expired", func(sobek.FunctionCall) sobek.Value { return rt.ToValue(remaining() == 0) }))
	must(rt, obj.Set("timeout", func(sobek.FunctionCall) sobek.Value {
		return rt.ToValue(arrival.K6Duration(max(remaining().Round(time.Millisecond), time.Millisecond)))
	}))
	must(rt, obj.Set("headers", func(c sobek.FunctionCall) sobek.Value {
		h := copyHeaders(rt, c.Argument(0))
		must(rt, h.Set(names.Deadline, strconv.FormatInt(remaining().Milliseconds(), 10)))
		if tier != "" {
			must(rt, h.Set(names.Criticality, tier))
		}
		return h
	}))
	return obj
}

// jsCriticality is criticality(tier, headers?): headers with the tier set.
func (mi *ModuleInstance) jsCriticality(call sobek.FunctionCall) sobek.Value {
	rt := mi.vu.Runtime()
	tier := call.Argument(0)
	if sobek.IsUndefined(tier) || tier.String() == "" {
		common.Throw(rt, errors.New("resilience.criticality(tier): tier must be a non-empty string, e.g. \"critical\", \"sheddable\""))
	}
	h := copyHeaders(rt, call.Argument(1))
	must(rt, h.Set(mi.names.Criticality, tier.String()))
	return h
}

// jsHeaderNames is headerNames({deadline, criticality}): sets this VU's
// header names for later helpers and clients, and returns them.
func (mi *ModuleInstance) jsHeaderNames(call sobek.FunctionCall) sobek.Value {
	rt := mi.vu.Runtime()
	o := newOpts("resilience.headerNames()", call.Argument(0))
	n := client.HeaderNames{Deadline: o.str("deadline", mi.names.Deadline), Criticality: o.str("criticality", mi.names.Criticality)}
	if o.err == nil && (textproto.CanonicalMIMEHeaderKey(n.Deadline) == "" || n.Criticality == "") {
		o.err = errors.New("resilience.headerNames(): header names must not be empty")
	}
	if o.err != nil {
		common.Throw(rt, o.err)
	}
	mi.names = n
	return rt.ToValue(map[string]any{"deadline": n.Deadline, "criticality": n.Criticality})
}

// copyHeaders returns a new object with the own properties of v, if any.
func copyHeaders(rt *sobek.Runtime, v sobek.Value) *sobek.Object {
	h := rt.NewObject()
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return h
	}
	src := v.ToObject(rt)
	for _, k := range src.Keys() {
		must(rt, h.Set(k, src.Get(k)))
	}
	return h
}
