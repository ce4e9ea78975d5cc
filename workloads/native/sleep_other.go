//go:build !linux

package native

import "time"

func pause(d time.Duration, _ bool) { time.Sleep(d) }
