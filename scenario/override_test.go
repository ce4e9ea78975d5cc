package scenario

import (
	"strings"
	"testing"
	"time"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name  string
		sets  []string
		check func(t *testing.T, s *Scenario)
	}{
		{"config", []string{"bank.bulkheads=off", "bank.config.vault-limit=2", "bank.vault-bulkhead=a=b"}, func(t *testing.T, s *Scenario) {
			c := s.Services["bank"].Config
			if c["bulkheads"] != "off" || c["vault-limit"] != "2" || c["vault-bulkhead"] != "a=b" {
				t.Errorf("config = %v", c)
			}
		}},
		{"env", []string{"bank.env.CACHE_TIMEOUT=0s", "bank.env.LEDGER={dep.ledger}"}, func(t *testing.T, s *Scenario) {
			e := s.Services["bank"].Env
			if e["CACHE_TIMEOUT"] != "0s" || e["LEDGER"] != "{dep.ledger}" || len(s.Services["bank"].Config) != 2 {
				t.Errorf("env = %v, config = %v", e, s.Services["bank"].Config)
			}
		}},
		{"replicas", []string{"vault.replicas=3"}, func(t *testing.T, s *Scenario) {
			if s.Services["vault"].Replicas != 3 || len(s.Edges()) != 4 {
				t.Errorf("replicas %d edges %v", s.Services["vault"].Replicas, s.Edges())
			}
		}},
		{"workload", []string{"workload.duration=90s", "workload.params.CHECK_RATE=200", "workload.params.NEW=x", "workload.script=other.js"}, func(t *testing.T, s *Scenario) {
			w := s.Workload
			if w.Duration.Std() != 90*time.Second || w.Params["CHECK_RATE"] != "200" || w.Params["NEW"] != "x" || w.Script != "other.js" {
				t.Errorf("workload = %+v", w)
			}
		}},
		{"seed and timeout", []string{"seed=42", "timeout=10m"}, func(t *testing.T, s *Scenario) {
			if s.Seed != 42 || s.Timeout.Std() != 10*time.Minute {
				t.Errorf("seed %d timeout %v", s.Seed, s.Timeout)
			}
		}},
		{"fault", []string{"faults.slow-vault.start=10s", "faults.slow-vault.duration=30s", "faults.slow-vault.attributes.latency=500", "faults.slow-vault.attributes.jitter=10", "faults.slow-vault.toxicity=0.5", "faults.slow-vault.direction=upstream"}, func(t *testing.T, s *Scenario) {
			f := s.Faults[0]
			if f.Start.Std() != 10*time.Second || f.Duration.Std() != 30*time.Second || f.Attributes["latency"] != 500 || f.Attributes["jitter"] != 10 || *f.Toxicity != 0.5 || f.Direction != "upstream" {
				t.Errorf("fault = %+v", f)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load("testdata/good/bank.yaml", testOptions)
			if err != nil {
				t.Fatal(err)
			}
			if err := Apply(s, tt.sets); err != nil {
				t.Fatal(err)
			}
			if err := Validate(s, testOptions); err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		set  string
		want string
	}{
		{"bnak.bulkheads=off", `--set bnak.bulkheads=off: unknown service "bnak" (allowed: ledger, vault, bank, workload, faults, seed, timeout)`},
		{"bank.env.CACHE_TIMOUT=0s", `--set bank.env.CACHE_TIMOUT=0s: bank sets no variable "CACHE_TIMOUT" in its env:, so there is nothing to override; did you mean "CACHE_TIMEOUT"? (allowed: CACHE_TIMEOUT, LEDGER, V)`},
		{"vault.env.SLOW=1", `--set vault.env.SLOW=1: vault sets no variable "SLOW" in its env:, so there is nothing to override; to add one, write it in the service's env: (allowed: none)`},
		{"bank.replicas=two", `--set bank.replicas=two: bank.replicas: want an integer, got "two"`},
		{"workload.duration=30", `--set workload.duration=30: workload.duration: want a duration like 20s or 1m30s, got 30: a bare number has no unit (write 30s or 30ms)`},
		{"workload.rate=3", `--set workload.rate=3: unknown workload key "workload.rate" (allowed: workload.duration, workload.script, workload.params.KEY, workload.engine, workload.connections, workload.streams.NAME.KEY)`},
		{"seed=x", `--set seed=x: seed: want an integer, got "x"`},
		{"faults.nope.start=1s", `--set faults.nope.start=1s: unknown fault "nope" (allowed: slow-vault)`},
		{"faults.slow-vault.edge=a->b", `--set faults.slow-vault.edge=a->b: unknown fault key "edge" (allowed: start, duration, direction, toxicity, attributes.KEY, match.method, match.path, match.path_regex, match.header.NAME)`},
		{"faults.slow-vault.attributes.latency=fast", `--set faults.slow-vault.attributes.latency=fast: faults.slow-vault.attributes.latency: want a number, got "fast"`},
		{"noequals", `--set noequals: want KEY=VALUE (allowed: ` + overrideForms + `)`},
		{"bank=1", `--set bank=1: want bank.KEY=VALUE (allowed: bank.KEY (config), bank.env.KEY, bank.replicas)`},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			s, err := Load("testdata/good/bank.yaml", testOptions)
			if err != nil {
				t.Fatal(err)
			}
			err = Apply(s, []string{tt.set})
			if err == nil || err.Error() != tt.want {
				t.Errorf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestApplyThenValidate checks that problems an override brings are named
// by the flag, and the file's own values keep their positions.
func TestApplyThenValidate(t *testing.T) {
	s, err := Load("testdata/good/bank.yaml", testOptions)
	if err != nil {
		t.Fatal(err)
	}
	sets := []string{"bank.replicas=20", "workload.duration=30s", "faults.slow-vault.attributes.latnecy=1", "bank.env.V={dep.vualt}"}
	if err := Apply(s, sets); err != nil {
		t.Fatal(err)
	}
	err = Validate(s, testOptions)
	want := strings.Join([]string{
		`--set bank.env.V={dep.vualt}: services.bank.env.V: template {dep.vualt}: the service does not depend on "vualt" (list it in depends_on) (allowed: {port}, {instance}, {dep.ledger}, {dep.vault}; {{ for a literal {)`,
		`--set bank.replicas=20: services.bank.replicas: replicas 20 out of range (allowed: 1 to 16)`,
		`--set faults.slow-vault.attributes.latnecy=1: faults[0].attributes: unknown attribute "latnecy" (allowed: latency, jitter)`,
		`testdata/good/bank.yaml:23:15: faults[0].duration: fault "slow-vault" ends at 40s, after the load ends (workload.duration 30s); for a shorter run, shorten the fault too: --set faults.slow-vault.start=10s --set faults.slow-vault.duration=10s`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

// TestApplyKeepsDefaultBaseline checks that a defaulted baseline follows
// the earliest fault when overrides move the faults.
func TestApplyKeepsDefaultBaseline(t *testing.T) {
	s, err := Load("testdata/good/kv-replicas.yaml", testOptions)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Assertions[1].Baseline; got != "before blip" {
		t.Fatalf("baseline = %q", got)
	}
	if err := Apply(s, []string{"faults.blip.start=40s"}); err != nil {
		t.Fatal(err)
	}
	if err := Validate(s, testOptions); err != nil {
		t.Fatal(err)
	}
	if got := s.Assertions[1].Baseline; got != "before slow-shard" {
		t.Errorf("defaulted baseline = %q after the move, want before slow-shard", got)
	}
	if got := s.Assertions[0].Baseline; got != "before blip" {
		t.Errorf("explicit baseline = %q, want it kept", got)
	}
}

// TestApplyStreams checks --set on a native workload's streams.
func TestApplyStreams(t *testing.T) {
	s, err := Load("testdata/good/native.yaml", testOptions)
	if err != nil {
		t.Fatal(err)
	}
	sets := []string{"workload.streams.cash.rate=15", "workload.streams.check.arrival.start=2s", "workload.streams.check.timeout=1s",
		"workload.streams.check.client.model=naive", "workload.streams.check.client.retries=0", "workload.streams.cash.client.deadline=1s",
		"workload.streams.read.keys.pk.n=300", "workload.streams.read.tags.caller=reader-9", "workload.streams.check.headers.X-Caller=rogue",
		"workload.streams.flood.workers=10", "workload.streams.flood.arrival.duration=5s", "workload.engine=native", "workload.connections=64"}
	if err := Apply(s, sets); err != nil {
		t.Fatal(err)
	}
	if err := Validate(s, testOptions); err != nil {
		t.Fatal(err)
	}
	w := s.Workload
	cash, check, read, flood := w.Streams["cash"], w.Streams["check"], w.Streams["read"], w.Streams["flood"]
	switch {
	case cash.Arrival.Rate == nil || *cash.Arrival.Rate != 15 || len(cash.Arrival.Stages) != 0:
		t.Errorf("cash arrival %+v: want a constant 15/s instead of its stages", cash.Arrival)
	case check.Arrival.Start.Std() != 2*time.Second || check.Timeout.Std() != time.Second:
		t.Errorf("check arrival %+v timeout %s", check.Arrival, check.Timeout)
	case check.Client == nil || check.Client.Model != "naive" || *check.Client.Retries != 0 || cash.Client.Deadline.Std() != time.Second:
		t.Errorf("clients %+v %+v", check.Client, cash.Client)
	case read.Keys["pk"].N != 300 || read.Tags["caller"] != "reader-9" || check.Headers["X-Caller"] != "rogue":
		t.Errorf("read %+v, check headers %v", read, check.Headers)
	case flood.Workers != 10 || flood.Arrival.Duration.Std() != 5*time.Second || w.Connections != 64:
		t.Errorf("flood %+v, connections %d", flood, w.Connections)
	}
	bad := []struct{ set, want string }{
		{"workload.streams.nope.rate=1", `--set workload.streams.nope.rate=1: unknown stream "nope" (allowed: check, cash, read, overload, flood)`},
		{"workload.streams.check.speed=1", `--set workload.streams.check.speed=1: unknown stream key "speed" (allowed: ` + streamKeys + `)`},
		{"workload.streams.check.rate=fast", `--set workload.streams.check.rate=fast: workload.streams.check.rate: want a number, got "fast"`},
		{"workload.streams.read.keys.xx.n=1", `--set workload.streams.read.keys.xx.n=1: unknown key stream "xx" (allowed: pk, sk)`},
	}
	for _, tt := range bad {
		s, _ := Load("testdata/good/native.yaml", testOptions)
		if err := Apply(s, []string{tt.set}); err == nil || err.Error() != tt.want {
			t.Errorf("got  %v\nwant %s", err, tt.want)
		}
	}
	// A value an override brings is named by its flag when it is wrong.
	s, _ = Load("testdata/good/native.yaml", testOptions)
	if err := Apply(s, []string{"workload.streams.check.rate=-5", "workload.streams.read.client.model=eager"}); err != nil {
		t.Fatal(err)
	}
	want := "--set workload.streams.check.rate=-5: workload.streams.check.arrival.rate: rate -5 out of range (allowed: 0 to 1e+06 requests/s)\n" +
		`--set workload.streams.read.client.model=eager: workload.streams.read.client.model: unknown client model "eager" (allowed: naive, backoff, budgeted, smart)`
	if err := Validate(s, testOptions); err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

// TestApplyMatch: --set aims a fault's match elsewhere (another gRPC
// method, one caller) and an empty header value removes that condition.
func TestApplyMatch(t *testing.T) {
	s, err := Load("testdata/good/bank.yaml", testOptions)
	if err != nil {
		t.Fatal(err)
	}
	sets := []string{"faults.slow-vault.match.path=/grpc.examples.echo.Echo/*", "faults.slow-vault.match.method=POST",
		"faults.slow-vault.match.header.x-caller=web-*", "faults.slow-vault.match.header.x-tier=gold", "faults.slow-vault.match.header.x-tier="}
	if err := Apply(s, sets); err != nil {
		t.Fatal(err)
	}
	m := s.Faults[0].Match
	if m == nil || m.Path != "/grpc.examples.echo.Echo/*" || m.Method != "POST" || len(m.Header) != 1 || m.Header["x-caller"] != "web-*" {
		t.Errorf("match = %+v", m)
	}
	err = Apply(s, []string{"faults.slow-vault.match.query=a"})
	if err == nil || !strings.Contains(err.Error(), `unknown match key "query" (allowed: match.method, match.path, match.path_regex, match.header.NAME)`) {
		t.Errorf("unknown match key: %v", err)
	}
}
