package guard

import "testing"

func TestIsLoopbackListen(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:0", true},
		{"127.0.0.2:8474", true},
		{"[::1]:1", true},
		{"[::ffff:127.0.0.1]:1", true},
		{"localhost:80", true},
		{"LocalHost:80", true},
		{"0.0.0.0:8474", false},
		{"[::]:8474", false},
		{":8474", false}, // empty host: every interface
		{"", false},
		{"10.0.0.1:1", false},
		{"example.com:1", false},
		{"localhost.evil.example:1", false},
		{"127.0.0.1", false}, // no port: not a listen address
		{"localhost", false},
		{"::1", false},
	} {
		if got := IsLoopbackListen(tc.addr); got != tc.want {
			t.Errorf("IsLoopbackListen(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for _, tc := range []struct {
		hostport string
		want     bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.1", true},
		{"127.0.0.2:1", true},
		{"[::1]:8080", true},
		{"[::1]", true},
		{"::1", true},
		{"localhost", true},
		{"localhost:8080", true},
		{"LOCALHOST:8080", true},
		{"0.0.0.0:8080", false},
		{"0.0.0.0", false},
		{"", false}, // empty host
		{":8080", false},
		{"[::]:1", false},
		{"10.0.0.1:80", false},
		{"evil.example:1", false},
		{"localhost.evil.example", false},
		{"127.0.0.1.evil.example:80", false},
	} {
		if got := IsLoopbackHost(tc.hostport); got != tc.want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", tc.hostport, got, tc.want)
		}
	}
}
