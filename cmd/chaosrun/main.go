// Command chaosrun is a chaos and load-testing harness: it stands up
// services behind Toxiproxy, drives open-model load with k6, injects faults on
// a schedule and checks that SLOs, bulkhead isolation and outlier ejection hold.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(Execute(context.Background(), NewState(), os.Args[1:]))
}
