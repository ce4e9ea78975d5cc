package resilience

import (
	"fmt"
	"math/big"
	"strings"

	"go.k6.io/k6/lib"
)

// shardName names this k6 instance's part of a test split across
// instances, "I/N" (I from 0), sent in the hello so that one receiver of
// N instances' streams (chaosrun judge) can tell them apart: the
// segment's position in --execution-segment-sequence, or, without one, in
// N equal segments. It is "" for a test that is not split, or split into
// unequal parts without a sequence.
func shardName(o lib.Options) string {
	seg := o.ExecutionSegment
	if seg == nil {
		return ""
	}
	if seq := o.ExecutionSegmentSequence; seq != nil && len(*seq) > 1 {
		if i, err := seq.FindSegmentPosition(seg); err == nil {
			return fmt.Sprintf("%d/%d", i, len(*seq))
		}
	}
	from, to, ok := strings.Cut(seg.String(), ":")
	f, okF := new(big.Rat).SetString(from)
	t, okT := new(big.Rat).SetString(to)
	if !ok || !okF || !okT {
		return ""
	}
	length := new(big.Rat).Sub(t, f)
	if length.Num().Cmp(big.NewInt(1)) != 0 || length.Denom().Cmp(big.NewInt(1)) == 0 {
		return ""
	}
	n := length.Denom()
	i := new(big.Rat).Mul(f, new(big.Rat).SetInt(n))
	if !i.IsInt() {
		return ""
	}
	return fmt.Sprintf("%s/%s", i.Num(), n)
}
