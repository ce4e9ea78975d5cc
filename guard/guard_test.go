package guard

import (
	"net/netip"
	"strings"
	"testing"
)

func TestBlockedRangesCoverAllButKept(t *testing.T) {
	cases := []struct {
		name    string
		allow   []string
		blocked []string
		open    []string
	}{
		{"loopback only", nil,
			[]string{"10.0.0.1", "192.168.1.1", "8.8.8.8", "0.0.0.0", "255.255.255.255", "128.0.0.1", "126.255.255.255", "::2", "2001:db8::1", "fe80::1"},
			[]string{"127.0.0.1", "127.255.255.254", "::1"}},
		{"one allowed host", []string{"10.1.2.3:8080"},
			[]string{"10.1.2.2", "10.1.2.4", "8.8.8.8"},
			[]string{"10.1.2.3", "127.0.0.1"}},
		{"allowed v6", []string{"[2001:db8::7]:443"},
			[]string{"2001:db8::6", "10.0.0.1"},
			[]string{"2001:db8::7", "::1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Parse(tc.allow)
			if err != nil {
				t.Fatal(err)
			}
			ranges := a.BlockedRanges()
			in := func(s string) bool {
				ip := netip.MustParseAddr(s)
				for _, r := range ranges {
					if r.Contains(ip) {
						return true
					}
				}
				return false
			}
			for _, s := range tc.blocked {
				if !in(s) {
					t.Errorf("%s is not blocked", s)
				}
			}
			for _, s := range tc.open {
				if in(s) {
					t.Errorf("%s is blocked", s)
				}
			}
			// Ranges never overlap one another.
			for i := range ranges {
				for j := i + 1; j < len(ranges); j++ {
					if ranges[i].Overlaps(ranges[j]) {
						t.Errorf("%s overlaps %s", ranges[i], ranges[j])
					}
				}
			}
		})
	}
}

func TestCheckParams(t *testing.T) {
	a, _ := Parse([]string{"staging.example:443"})
	cases := []struct {
		params  map[string]string
		wantErr string
	}{
		{map[string]string{"RATE": "100", "NAME": "x:y z"}, ""},
		{map[string]string{"URL": "http://127.0.0.1:8080/x", "H": "localhost:9"}, ""},
		{map[string]string{"URL": "https://staging.example/x"}, ""},
		{map[string]string{"URL": "https://prod.example/x"}, "workload.params.URL points at prod.example"},
		{map[string]string{"ADDR": "10.0.0.5:6379"}, "workload.params.ADDR points at 10.0.0.5:6379"},
	}
	for _, tc := range cases {
		err := a.CheckParams(tc.params)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.params, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%v: error %v, want %q", tc.params, err, tc.wantErr)
		}
	}
}

func TestParseRejectsEmpty(t *testing.T) {
	if _, err := Parse([]string{":80"}); err == nil {
		t.Fatal("empty host accepted")
	}
}

func TestCheckExternal(t *testing.T) {
	a, _ := Parse([]string{"staging.example:8443", "10.0.0.7"})
	cases := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8080", true},
		{"localhost:9", true},
		{"[::1]:80", true},
		{"staging.example:8443", true},
		{"10.0.0.7:6379", true},
		{"staging.example:9999", true}, // the host is allowed
		{"prod.example:443", false},
		{"10.0.0.8:6379", false},
	}
	for _, tc := range cases {
		err := a.CheckExternal("api", tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("CheckExternal(%s) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "services.api.external is "+tc.addr) {
			t.Errorf("error does not name the service and address: %v", err)
		}
	}
}
