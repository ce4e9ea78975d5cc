package workloads

import (
	"fmt"
	"strings"
	"time"

	"github.com/chaosrun/chaosrun/scenario"
)

// ScriptEnv is the environment handed to the workload script: the
// scenario's params, TARGET_<SERVICE> (first replica) and TARGETS_<SERVICE>
// (every replica, comma-separated) base URLs, CHAOSRUN_SEED,
// CHAOSRUN_SCENARIO and DURATION, how long load runs. addrs maps each
// service to its instances' host:port, in replica order.
func ScriptEnv(sc *scenario.Scenario, addrs map[string][]string, seed int64, duration time.Duration) (map[string]string, error) {
	env := map[string]string{
		"DURATION":          duration.String(),
		"CHAOSRUN_SEED":     fmt.Sprint(seed),
		"CHAOSRUN_SCENARIO": sc.Name,
	}
	for k, v := range sc.Workload.Params {
		env[k] = v
	}
	for _, t := range sc.Workload.Targets {
		if len(addrs[t]) == 0 {
			return nil, fmt.Errorf("workload target %q: no running instance of service %q", t, t)
		}
		urls := make([]string, len(addrs[t]))
		for i, a := range addrs[t] {
			urls[i] = "http://" + a
		}
		env["TARGET_"+envName(t)] = urls[0]
		env["TARGETS_"+envName(t)] = strings.Join(urls, ",")
	}
	return env, nil
}

// envName is a service name as an environment variable's suffix.
func envName(s string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(s))
}
