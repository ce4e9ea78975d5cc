package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// streamKeys lists what --set workload.streams.NAME.KEY accepts.
const streamKeys = "rate, arrival.rate, arrival.start, arrival.duration, target, method, path, body, timeout, workers, " +
	"headers.NAME, tags.NAME, client.model, client.retries, client.deadline, client.tier, client.budget, keys.NAME.n, keys.NAME.s, keys.NAME.kind"

// applyStream applies workload.streams.NAME.KEY=VALUE; rate (or
// arrival.rate) replaces the stream's schedule with that constant rate.
func applyStream(s *Scenario, parts []string, val string) (string, error) {
	if len(parts) < 2 {
		return "", errAllowed("workload.streams.NAME.KEY where KEY is one of "+streamKeys, "want workload.streams.NAME.KEY")
	}
	st := s.Workload.Streams[parts[0]]
	if st == nil {
		return "", errAllowed(allowedList(s.Workload.streamNames()), "unknown stream %q", parts[0])
	}
	p := "workload.streams." + parts[0]
	key := strings.Join(parts[1:], ".")
	where := p + "." + key
	num := func() (float64, error) {
		x, err := parseNumber(val)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", where, err)
		}
		return x, nil
	}
	dur := func(to *Duration) (string, error) {
		d, err := parseDuration(val)
		if err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		*to = d
		return where, nil
	}
	switch key {
	case "rate", "arrival.rate":
		x, err := num()
		if err != nil {
			return "", err
		}
		st.Arrival = Arrival{Rate: &x, Start: st.Arrival.Start, Duration: st.Arrival.Duration}
		return p + ".arrival.rate", nil
	case "arrival.start":
		return dur(&st.Arrival.Start)
	case "arrival.duration":
		return dur(&st.Arrival.Duration)
	case "timeout":
		return dur(&st.Timeout)
	case "target":
		st.Target = val
		return where, nil
	case "method":
		st.Method = val
		return where, nil
	case "path":
		st.Path = val
		return where, nil
	case "body":
		st.Body = val
		return where, nil
	case "workers":
		n, err := strconv.Atoi(val)
		if err != nil {
			return "", fmt.Errorf("%s: want an integer, got %q", where, val)
		}
		st.Workers = n
		return where, nil
	}
	switch {
	case len(parts) == 3 && (parts[1] == "headers" || parts[1] == "tags"):
		m := &st.Headers
		if parts[1] == "tags" {
			m = &st.Tags
		}
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[parts[2]] = val
		return where, nil
	case len(parts) == 3 && parts[1] == "client":
		return applyClient(st, parts[2], val, where)
	case len(parts) == 4 && parts[1] == "keys":
		return applyKeys(st, parts[2], parts[3], val, where)
	}
	return "", errAllowed(streamKeys, "unknown stream key %q", key)
}

func applyClient(st *Stream, key, val, where string) (string, error) {
	if st.Client == nil {
		st.Client = &Client{}
	}
	c := st.Client
	switch key {
	case "model":
		c.Model = val
	case "tier":
		c.Tier = val
	case "deadline":
		d, err := parseDuration(val)
		if err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		c.Deadline = d
	case "retries":
		n, err := strconv.Atoi(val)
		if err != nil {
			return "", fmt.Errorf("%s: want an integer, got %q", where, val)
		}
		c.Retries = &n
	case "budget":
		x, err := parseNumber(val)
		if err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		c.Budget = &x
	default:
		return "", errAllowed("model, retries, deadline, tier, budget", "unknown client key %q", key)
	}
	return where, nil
}

func applyKeys(st *Stream, name, key, val, where string) (string, error) {
	k := st.Keys[name]
	if k == nil {
		return "", errAllowed(allowedList(sortedKeys(st.Keys)), "unknown key stream %q", name)
	}
	switch key {
	case "kind":
		k.Kind = val
	case "n":
		n, err := strconv.Atoi(val)
		if err != nil {
			return "", fmt.Errorf("%s: want an integer, got %q", where, val)
		}
		k.N = n
	case "s":
		x, err := parseNumber(val)
		if err != nil {
			return "", fmt.Errorf("%s: %w", where, err)
		}
		k.S = x
	default:
		return "", errAllowed("kind, n, s", "unknown key stream key %q", key)
	}
	return where, nil
}
