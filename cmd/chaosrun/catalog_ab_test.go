package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
)

// catalogAB is a catalog scenario run both ways: with its protection on it
// holds (exit 0); switched off it breaches (exit 1) on the named assertion.
// Either way no money is lost and nothing of the run is left.
type catalogAB struct {
	scenario string // the scenario's name: its record's folder
	// file is the scenario's path from the repository's root; default
	// scenarios/<scenario>.yaml.
	file     string
	short    []string // --set overrides that shorten the run for CI
	off      []string // --set overrides that switch the protection off
	breached string   // an assertion that must fail with the protection off
	// offBelow bounds what the breached assertion observes with the
	// protection off, where the claim is stronger than a breach.
	offBelow float64
	// moneyCheck: the scenario has the bank's money-conserved end check.
	moneyCheck bool
	// faithful, when set, compares what the two arms observed: a limit in
	// shadow mode (on) must count what the enforcing arm (off) rejected.
	faithful *faithfulness
	// parallel runs the two arms side by side, after the package's
	// timing-sensitive tests: for assertions that count (retries, back
	// pressure) rather than time, which sharing the cores does not move.
	parallel bool
}

// faithfulness names the assertion whose observed value is the on arm's
// would-be count, the one whose observed value is the off arm's real count,
// and the one counting the calls the limit decided on in each arm: the
// shares of calls counted must agree within the given part of the real
// share. Shares, not counts: the arm without enforcement is overloaded, so
// fewer calls reach the limit there.
type faithfulness struct {
	on, off, calls string
	within         float64
}

// runCatalogAB runs both arms of ab on a testbed ("local" or "docker");
// after returns what the run left behind (Docker objects), if anything.
func runCatalogAB(t *testing.T, testbed string, ab catalogAB, left func(pid int) []string) {
	if ab.parallel && ab.faithful != nil {
		t.Fatalf("%s: a faithfulness check needs both arms ended; its arms cannot run in parallel", ab.scenario)
	}
	var mu sync.Mutex
	observed := map[string]float64{} // arm/assertion -> observed value
	for _, arm := range []struct {
		name     string
		sets     []string
		wantCode int
	}{
		{"on-holds", ab.short, exitOK},
		{"off-breaches", append(append([]string(nil), ab.short...), ab.off...), exitBreach},
	} {
		t.Run(ab.scenario+"/"+arm.name, func(t *testing.T) {
			if ab.parallel {
				t.Parallel()
			}
			args := []string{"--quiet", "--testbed", testbed}
			for _, s := range arm.sets {
				args = append(args, "--set", s)
			}
			args = append(args, ab.path())
			res := runChaosrun(t, 5*time.Minute, args...)
			t.Logf("chaosrun run %s:\n%s", strings.Join(args, " "), res.stdout)
			if res.code != arm.wantCode {
				t.Fatalf("exit code %d, want %d\nstderr:\n%s", res.code, arm.wantCode, res.stderr)
			}
			// readRecord checks the record against its schema first.
			r := readRecord(t, filepath.Join(res.outDir, ab.scenario, "run.json"))
			if r.Incomplete {
				t.Fatalf("record incomplete: %v", r.Problems)
			}
			if r.Testbed != testbed {
				t.Errorf("record says testbed %q, want %q", r.Testbed, testbed)
			}
			if len(r.Verdicts) == 0 {
				t.Fatal("run record holds no verdicts")
			}
			for _, v := range r.Verdicts {
				t.Logf("%s", verdictLine(v))
				mu.Lock()
				observed[arm.name+"/"+v.Assertion] = v.Observed
				mu.Unlock()
				if arm.wantCode == exitOK && !v.Pass {
					t.Errorf("protection on, yet %s failed", verdictLine(v))
				}
				// The catalog's loads send on a schedule: never flagged.
				if arm.wantCode == exitOK && v.Understated != "" {
					t.Errorf("protection on, yet %s is understated: %s", v.Assertion, v.Understated)
				}
			}
			// Every fault of the catalog bites, protected or not: something
			// observed moves while it is in force.
			for _, e := range r.FaultEffects {
				t.Logf("fault effect %s: %d compared, moved %q %s", e.Fault, e.Compared, e.Moved, e.Unjudged)
				if arm.wantCode == exitOK && e.Compared > 0 && len(e.Moved) == 0 {
					t.Errorf("protection on, yet fault %s moved none of %d observed series", e.Fault, e.Compared)
				}
			}
			if arm.wantCode == exitBreach {
				if !strings.Contains(res.stderr, ab.breached) {
					t.Errorf("breach message does not name %s:\n%s", ab.breached, res.stderr)
				}
				v, ok := findVerdict(r, ab.breached)
				if !ok || v.Pass {
					t.Errorf("protection off, yet assertion %s did not fail (found %v)", ab.breached, ok)
				}
				if ab.offBelow > 0 && v.Observed >= ab.offBelow {
					t.Errorf("protection off: %s observed %g, want below %g", ab.breached, v.Observed, ab.offBelow)
				}
			}
			// Both ways, no money is lost or paid twice.
			if ab.moneyCheck && len(r.EndChecks) == 0 {
				t.Error("no money-conserved end check in the record")
			}
			for _, c := range r.EndChecks {
				t.Logf("end check %s: ok %v %s", c.Name, c.OK, c.Detail)
			}
			assertNoDataLost(t, r)
			assertNothingLeft(t, r)
			if left != nil {
				if l := left(res.pid); len(l) > 0 {
					t.Errorf("left on the engine after the run: %v", l)
				}
			}
			if testbed == "docker" {
				checkDockerStartup(t, ab.scenario, r)
			}
		})
	}
	if f := ab.faithful; f != nil {
		t.Run(ab.scenario+"/shadow-faithful", func(t *testing.T) {
			would, okW := observed["on-holds/"+f.on]
			enforced, okR := observed["off-breaches/"+f.off]
			callsOn, okCW := observed["on-holds/"+f.calls]
			callsOff, okCR := observed["off-breaches/"+f.calls]
			if !okW || !okR || !okCW || !okCR {
				t.Fatalf("an arm did not record %s (on), %s (off) or %s (both): %v", f.on, f.off, f.calls, observed)
			}
			t.Logf("shadow mode counted %g would-be rejections of %g calls; enforcing rejected %g of %g", would, callsOn, enforced, callsOff)
			if callsOn <= 0 || callsOff <= 0 || enforced <= 0 {
				t.Fatalf("nothing to compare: %g of %g calls (shadow), %g of %g (enforcing)", would, callsOn, enforced, callsOff)
			}
			shadow, enforcing := would/callsOn, enforced/callsOff
			if math.Abs(shadow-enforcing) > f.within*enforcing {
				t.Errorf("shadow share %.3f is not within %.0f%% of the enforcing run's share %.3f", shadow, 100*f.within, enforcing)
			}
		})
	}
}

// path is the scenario's file from the repository's root.
func (ab catalogAB) path() string {
	if ab.file != "" {
		return ab.file
	}
	return filepath.Join("scenarios", ab.scenario+".yaml")
}

// kvABs are kvdispatcher's scenarios; targets/kvdispatcher runs them on
// the local testbed with the same short profiles (23 s of load, faults and
// the flood from 5 s for 8 s), the Docker test here in the same form.
var kvABs = []catalogAB{
	{scenario: "kv-scan-quota", short: kvShort, off: []string{"kvdispatcher.ru=off"}, breached: "point-readers-unharmed"},
	{scenario: "kv-slow-partition", short: kvShortFault("slow-shard0"), off: []string{"kvdispatcher.shard-breakers=off"},
		breached: "other-shards-available"},
	{scenario: "kv-hot-key-flood", short: kvShortFlood, off: []string{"kvdispatcher.hotkeys=off"}, breached: "flood-reaches-storage-as-a-trickle"},
	{scenario: "kv-tier-shedding", short: kvShortFault("slow-shard0"), off: []string{"kvdispatcher.tiers=off"}, breached: "critical-tier-up"},
}

// kvK6Twins are kvdispatcher's scenarios on k6 (scenarios/k6): the same
// claims as their native scenarios in kvABs, so that both engines split.
var kvK6Twins = []catalogAB{
	{scenario: "kv-hot-key-flood-k6", file: "scenarios/k6/kv-hot-key-flood.yaml",
		short: append(kvShortFault("flood"), "workload.params.FLOOD_START=5s", "workload.params.FLOOD_DURATION=8s"),
		off:   []string{"kvdispatcher.hotkeys=off"}, breached: "flood-reaches-storage-as-a-trickle"},
}

// The kv scenarios' short profiles: 23 s of load; a fault from 5 s for
// 8 s, so that 5 s of baseline, the fault and 5 s after its 5 s settle
// are judged.
var (
	kvShort      = []string{"workload.duration=23s"}
	kvShortFlood = append(kvShortFault("flood"), "workload.streams.flood.arrival.start=5s", "workload.streams.flood.arrival.duration=8s")
)

func kvShortFault(fault string) []string {
	return append(append([]string(nil), kvShort...), "faults."+fault+".start=5s", "faults."+fault+".duration=8s")
}

// TestK6TwinsMirrorNative checks that each k6 twin is its native
// scenario on k6: the same seed, services, faults, assertions, end checks
// and load duration, so that an A/B split on either engine proves the same
// claim.
func TestK6TwinsMirrorNative(t *testing.T) {
	for _, ab := range slices.Concat(k6TwinABs, kvK6Twins) {
		t.Run(ab.scenario, func(t *testing.T) {
			twin, err := scenario.Load(filepath.Join("..", "..", ab.path()), scenario.Options{})
			if err != nil {
				t.Fatal(err)
			}
			native, err := scenario.Load(filepath.Join("..", "..", "scenarios", strings.TrimSuffix(ab.scenario, "-k6")+".yaml"), scenario.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if twin.Workload.Engine != scenario.EngineK6 || native.Workload.Engine != scenario.EngineNative {
				t.Fatalf("engines %s (twin) and %s (native): want k6 and native", twin.Workload.Engine, native.Workload.Engine)
			}
			claim := func(s *scenario.Scenario) string {
				b, err := json.Marshal([]any{s.Seed, s.Services, s.Faults, s.Assertions, s.EndChecks, s.Workload.Duration})
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			if a, b := claim(twin), claim(native); a != b {
				t.Errorf("%s differs from its native scenario:\n%s\n%s", ab.path(), a, b)
			}
		})
	}
}

// dockerEveryPair, set to 1, makes TestDockerCatalogAB run every catalog
// pair on Docker (make docker-catalog); make test runs dockerPairs.
const dockerEveryPair = "CHAOSRUN_DOCKER_CATALOG"

// dockerPairs are the pairs make test runs on Docker: one for each thing the
// Docker testbed does differently (a host fault as docker pause on one of
// a service's replica containers, the HTTP fault stage in the Toxiproxy
// container, here on gRPC calls between containers). Every local pair runs
// in make test too, TestDockerComposeProject runs third-party software
// (PostgreSQL, Redis, nginx) from a Compose project, and make
// docker-catalog runs every pair on Docker.
var dockerPairs = []string{"bank-outlier-pause", "grpc-unavailable-retries"}

// TestDockerCatalogAB runs catalog scenarios' A/B pairs with --testbed
// docker: each service in its own container, Toxiproxy in its own, and the
// pairs must split as they do locally. Every pair with
// CHAOSRUN_DOCKER_CATALOG=1 (make docker-catalog), dockerPairs otherwise.
func TestDockerCatalogAB(t *testing.T) {
	skipShort(t)
	cli := requireDockerEngine(t)
	left := func(pid int) []string { return ownedBy(t, cli, pid) }
	every := os.Getenv(dockerEveryPair) == "1"
	for _, ab := range allCatalogABs() {
		if every || slices.Contains(dockerPairs, ab.scenario) {
			runCatalogAB(t, "docker", ab, left)
		}
	}
}

// allCatalogABs are every local catalog pair.
func allCatalogABs() []catalogAB {
	return slices.Concat(bankABs, platformABs, kvABs, []catalogAB{grpcSlowVaultAB}, grpcRetryABs)
}

// TestDockerPairsExist keeps dockerPairs to names of catalog pairs.
func TestDockerPairsExist(t *testing.T) {
	for _, name := range dockerPairs {
		if !slices.ContainsFunc(allCatalogABs(), func(ab catalogAB) bool { return ab.scenario == name }) {
			t.Errorf("dockerPairs names %s, which is no catalog pair", name)
		}
	}
}
