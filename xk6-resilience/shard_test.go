package resilience

import (
	"testing"

	"go.k6.io/k6/lib"
)

func TestShardName(t *testing.T) {
	seg := func(s string) *lib.ExecutionSegment {
		es, err := lib.NewExecutionSegmentFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		return es
	}
	seq := func(s string) *lib.ExecutionSegmentSequence {
		ess, err := lib.NewExecutionSegmentSequenceFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		return &ess
	}
	tests := []struct {
		name string
		opts lib.Options
		want string
	}{
		{"not split", lib.Options{}, ""},
		{"whole", lib.Options{ExecutionSegment: seg("0:1")}, ""},
		{"first of two", lib.Options{ExecutionSegment: seg("0:1/2")}, "0/2"},
		{"third of four", lib.Options{ExecutionSegment: seg("1/2:3/4")}, "2/4"},
		{"unequal without a sequence", lib.Options{ExecutionSegment: seg("1/3:1")}, ""},
		{"in a sequence", lib.Options{ExecutionSegment: seg("1/3:2/3"), ExecutionSegmentSequence: seq("0,1/3,2/3,1")}, "1/3"},
		{"unequal in a sequence", lib.Options{ExecutionSegment: seg("1/4:1"), ExecutionSegmentSequence: seq("0,1/4,1")}, "1/2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shardName(tt.opts); got != tt.want {
				t.Errorf("shardName = %q, want %q", got, tt.want)
			}
		})
	}
}
