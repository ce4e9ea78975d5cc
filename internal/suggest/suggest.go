// Package suggest finds the name a typo was meant to be.
package suggest

import (
	"fmt"
	"strings"
)

// UnknownFlag adds the nearest of names to a flag parser's "unknown flag:
// --NAME" error ("; did you mean --testbed?"); other errors pass as they
// are.
func UnknownFlag(err error, names []string) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	if near := Nearest(name, names); near != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, near)
	}
	return err
}

// Nearest returns the name in names closest to s by edit distance, when
// it is close enough to be a typo (at most a third of s's length, and 3);
// "" otherwise.
func Nearest(s string, names []string) string {
	best, bestD := "", min(3, max(1, len(s)/3))+1
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
