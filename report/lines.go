package report

import (
	"fmt"
	"io"
	"strings"
)

// PrintLines prints each line of err to w after prefix.
func PrintLines(w io.Writer, prefix string, err error) {
	if err == nil {
		return
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "%s: %s\n", prefix, line)
	}
}
