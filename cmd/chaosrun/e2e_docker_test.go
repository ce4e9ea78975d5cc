package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/record"
	"github.com/chaosrun/chaosrun/testbed/docker"
)

// The Docker end-to-end tests run the real binary with --testbed docker:
// real containers, images built here, real Toxiproxy and k6. In CI
// (CI=true) an unreachable Docker engine fails them; elsewhere they are
// skipped with the reason.

func requireDockerEngine(t *testing.T) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli, err := docker.NewClient(ctx)
	if err != nil {
		testenv.Unavailable(t, "no reachable Docker engine for the --testbed docker tests: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// ownedBy lists the containers and networks a harness process made.
func ownedBy(t *testing.T, cli *client.Client, pid int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	f := make(client.Filters).Add("label", docker.LabelOwner)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Items {
		if docker.OwnedBy(c.Labels[docker.LabelOwner], pid) {
			out = append(out, "container "+strings.Join(c.Names, ","))
		}
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns.Items {
		if docker.OwnedBy(n.Labels[docker.LabelOwner], pid) {
			out = append(out, "network "+n.Name)
		}
	}
	return out
}

// checkDockerStartup: a bank stack on Docker starts within 10 s with its
// images present (measured 2–4 s): a wide margin, so a slow machine does
// not fail it, a regression does.
func checkDockerStartup(t *testing.T, scenario string, r *record.Run) {
	t.Helper()
	t.Logf("%s: stack start-up %s, teardown %s", scenario, r.Timings.Startup, r.Timings.Teardown)
	if startup := time.Duration(r.Timings.Startup); strings.HasPrefix(scenario, "bank-") && (startup <= 0 || startup > 10*time.Second) {
		t.Errorf("%s: stack start-up %s, want recorded and at most 10s", scenario, r.Timings.Startup)
	}
}

// TestReliabilityDockerInterruptAndKill: Ctrl-C and a closed terminal
// (SIGHUP) tear the containers and the network down and leave a record
// marked incomplete; SIGKILL cannot, and `chaosrun clean` removes what it
// left.
func TestReliabilityDockerInterruptAndKill(t *testing.T) {
	robustEndToEnd(t)
	cli := requireDockerEngine(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			outDir := t.TempDir()
			bg := startChaosrun(t, append([]string{"run", "--quiet", "--testbed", "docker", "--out-dir", outDir}, append(shortRun, "scenarios/bank-slow-vault.yaml")...)...)
			pid := bg.cmd.Process.Pid
			// Wait until the stack runs and load has started.
			deadline := time.Now().Add(5 * time.Minute)
			for len(ownedBy(t, cli, pid)) < 5 && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
			}
			waitForChild(t, pid, nativeVault.child, time.Minute)
			time.Sleep(3 * time.Second)
			if n := len(ownedBy(t, cli, pid)); n < 5 {
				t.Fatalf("the run has %d containers and networks, want 5 (4 containers, 1 network)\n%s", n, bg.stderr.String())
			}
			bg.cmd.Process.Signal(sig)
			bg.wait(t, time.Minute)
			if sig != syscall.SIGKILL {
				if code := bg.cmd.ProcessState.ExitCode(); code != exitInterrupted {
					t.Errorf("exit code %d after %s, want %d\n%s", code, sig, exitInterrupted, bg.stderr.String())
				}
				if left := ownedBy(t, cli, pid); len(left) > 0 {
					t.Errorf("left after %s: %v", sig, left)
				}
				r := readRecord(t, filepath.Join(outDir, "bank-slow-vault", "run.json"))
				if !r.Incomplete || r.Testbed != "docker" {
					t.Errorf("the record of a Docker run ended by %s: incomplete %v, testbed %q; want marked incomplete, docker (problems: %v)", sig, r.Incomplete, r.Testbed, r.Problems)
				}
				return
			}
			left := ownedBy(t, cli, pid)
			if len(left) == 0 {
				t.Fatal("a SIGKILLed harness left nothing: the clean test proves nothing")
			}
			code, stdout, stderr := runCLI(t, "clean")
			if code != exitOK {
				t.Fatalf("chaosrun clean: exit %d\n%s%s", code, stdout, stderr)
			}
			if after := ownedBy(t, cli, pid); len(after) > 0 {
				t.Errorf("left after chaosrun clean: %v (before: %v)\n%s", after, left, stdout)
			}
			if !strings.Contains(stdout, "removed container") || !strings.Contains(stdout, "removed network") {
				t.Errorf("clean did not say what it removed:\n%s", stdout)
			}
		})
	}
}

// TestReliabilityCleanReusedPID: a dead run's network whose harness PID now
// belongs to another process (a reused PID) is removed by `chaosrun clean`;
// the network of a harness that does run is left alone. Under 1 s.
func TestReliabilityCleanReusedPID(t *testing.T) {
	skipShort(t)
	cli := requireDockerEngine(t)
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() }) //nolint:errcheck
	live := docker.OwnerOf(other.Process.Pid)
	pidStart, host, _ := strings.Cut(live, "@")
	pid, start, ok := strings.Cut(pidStart, ":")
	if !ok {
		t.Fatalf("owner %q has no start time", live)
	}
	n, _ := strconv.Atoi(start)
	dead := fmt.Sprintf("%s:%d@%s", pid, n-1, host) // what a harness with this PID, started earlier, wrote
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nets := map[string]string{}
	for _, owner := range []string{dead, live} {
		run := "reuse" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36) + strconv.Itoa(len(nets))
		res, err := cli.NetworkCreate(ctx, "chaosrun-"+run, client.NetworkCreateOptions{Labels: map[string]string{
			docker.LabelRun: run, docker.LabelScenario: "reused-pid", docker.LabelOwner: owner}})
		if err != nil {
			t.Fatal(err)
		}
		nets[owner] = run
		t.Cleanup(func() { cli.NetworkRemove(context.Background(), res.ID, client.NetworkRemoveOptions{}) }) //nolint:errcheck
	}
	for owner, run := range nets {
		code, stdout, stderr := runCLI(t, "clean", "--run", run)
		if code != exitOK {
			t.Fatalf("clean --run %s: exit %d\n%s%s", run, code, stdout, stderr)
		}
		left, err := docker.Leftovers(ctx, cli, run)
		if err != nil {
			t.Fatal(err)
		}
		switch owner {
		case dead:
			if len(left) > 0 || !strings.Contains(stdout, "removed network chaosrun-"+run) {
				t.Errorf("the network of a dead harness whose PID was reused is still there: %v\n%s", left, stdout)
			}
		case live:
			if len(left) != 1 || !strings.Contains(stdout, "left run "+run+" alone") {
				t.Errorf("the network of a running harness was not left alone: %v\n%s", left, stdout)
			}
		}
	}
}
