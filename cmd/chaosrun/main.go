// Command chaosrun is a chaos and load-testing harness: it stands up
// services behind Toxiproxy, drives open-model load with k6, injects faults on
// a schedule and checks that SLOs, bulkhead isolation and outlier ejection hold.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Execute(ctx, NewState(), os.Args[1:])
	stop()
	os.Exit(code)
}
