package setup

import "testing"

func TestFlagsChecks(t *testing.T) {
	tests := []struct {
		testbed                 string
		shards                  int
		wantTestbed, wantShards string
	}{
		{"local", 1, "", ""},
		{"docker", 16, "", ""},
		{"k8s", 1, `--testbed "k8s" is not available (allowed: local, docker)`, ""},
		{"local", 0, "", "--load-shards 0 out of range (allowed: 1 to 16)"},
		{"local", 17, "", "--load-shards 17 out of range (allowed: 1 to 16)"},
	}
	if d := DefaultFlags(); d.CheckTestbed() != nil || d.CheckShards() != nil {
		t.Errorf("the defaults %+v do not pass their own checks", d)
	}
	for _, tt := range tests {
		f := Flags{Testbed: tt.testbed, Shards: tt.shards}
		for _, c := range []struct {
			err  error
			want string
		}{{f.CheckTestbed(), tt.wantTestbed}, {f.CheckShards(), tt.wantShards}} {
			if got := errString(c.err); got != c.want {
				t.Errorf("%+v: err %q, want %q", f, got, c.want)
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
