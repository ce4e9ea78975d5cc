package guard

import "testing"

func TestIsLoopbackListen(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:0", true}, {"127.0.0.2:8474", true}, {"[::1]:1", true}, {"localhost:80", true},
		{"0.0.0.0:8474", false}, {":8474", false}, {"10.0.0.1:1", false}, {"example.com:1", false}, {"127.0.0.1", false},
	} {
		if got := IsLoopbackListen(tc.addr); got != tc.want {
			t.Errorf("IsLoopbackListen(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}
