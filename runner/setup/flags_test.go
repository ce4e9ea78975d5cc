package setup

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestFlagsChecks(t *testing.T) {
	tests := []struct {
		args, wantTestbed, wantShards string
	}{
		{"", "", ""},
		{"--testbed docker --load-shards 16", "", ""},
		{"--testbed k8s", `--testbed "k8s" is not available (allowed: local, docker)`, ""},
		{"--load-shards 0", "", "--load-shards 0 out of range (allowed: 1 to 16)"},
		{"--load-shards 17", "", "--load-shards 17 out of range (allowed: 1 to 16)"},
	}
	for _, tt := range tests {
		var f Flags
		fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.Register(fl)
		if err := fl.Parse(strings.Fields(tt.args)); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			err  error
			want string
		}{{f.CheckTestbed(), tt.wantTestbed}, {f.CheckShards(), tt.wantShards}} {
			if got := errString(c.err); got != c.want {
				t.Errorf("%q: err %q, want %q", tt.args, got, c.want)
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
