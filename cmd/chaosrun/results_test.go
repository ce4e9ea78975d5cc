package main

import (
	"strings"
	"testing"
)

func TestRunRefusesBadResultsFlags(t *testing.T) {
	good := writeScenario(t, goodScenario)
	code, _, se := runCLI(t, "run", "--results-listen", "somewhere", good)
	if code != exitUsage || !strings.Contains(se, "--results-listen \"somewhere\" is not HOST:PORT") {
		t.Fatalf("exit %d, stderr %q", code, se)
	}
}
