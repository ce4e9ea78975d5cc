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
		{map[string]string{"ADDR": "10.0.0.5:6379"}, "workload.params.ADDR points at 10.0.0.5,"},
		{map[string]string{"IP": "10.0.0.5"}, "workload.params.IP points at 10.0.0.5,"},
		{map[string]string{"IP": "fd00::5"}, "points at fd00::5,"},
		{map[string]string{"IP": "[fd00::5]:80"}, "points at fd00::5,"},
		{map[string]string{"IP": "::ffff:10.0.0.5"}, "points at 10.0.0.5,"},
		{map[string]string{"IP": "::ffff:127.0.0.1", "L": "[::1]:80", "Z": "0:0:0:0:0:0:0:1"}, ""},
		{map[string]string{"URL": "http://0x0a000005/"}, "points at 10.0.0.5,"},
		{map[string]string{"URL": "http://167772165:80/"}, "points at 10.0.0.5,"},
		{map[string]string{"URL": "http://127.0.0.1@10.0.0.5/"}, "points at 10.0.0.5,"},
		{map[string]string{"URL": "//evil.example/x"}, "points at evil.example,"},
		{map[string]string{"URL": "ws://STAGING.example./x"}, ""},
		{map[string]string{"LIST": "127.0.0.1:80,10.0.0.6"}, "points at 10.0.0.6,"},
		{map[string]string{"ANY": "0.0.0.0"}, "points at 0.0.0.0,"},
		{map[string]string{"RATIO": "1.5", "VERSION": "1.2.3", "SEL": "api:transact"}, ""},
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

func TestHosts(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"10.0.0.5", []string{"10.0.0.5"}},
		{"10.0.0.5:80", []string{"10.0.0.5"}},
		{"http://user:pw@Example.COM:8080/p?q=1#f", []string{"example.com"}},
		{"https://[2001:db8::1]:443/", []string{"2001:db8::1"}},
		{"fe80::1%eth0", []string{"fe80::1"}},
		{"[fe80::1%25eth0]:80", []string{"fe80::1"}},
		{"a=1, 10.1.2.3; b.example:9000 http://x/", []string{"10.1.2.3", "b.example", "x"}},
		{"redis://10.0.0.9", []string{"10.0.0.9"}},
		{"http://10.1/", []string{"10.0.0.1"}},
		{"http://0177.0.0.1/", []string{"127.0.0.1"}},
		{"fast", nil},
		{"1.5", nil},
		{"x:y z", nil},
		{"", nil},
	}
	for _, tc := range cases {
		if got := Hosts(tc.in); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("Hosts(%q) = %q, want %q", tc.in, got, tc.want)
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
		err := a.CheckExternal(tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("CheckExternal(%s) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
		if err != nil && err.Error() != tc.addr+" is outside this run's blast radius: add "+tc.addr+" to allow_targets" {
			t.Errorf("error does not name the address and what to do: %v", err)
		}
	}
}

// TestArgHosts: a k6 output's or flag's argument names the hosts it
// sends to, its NAME=VALUE parts split; file names and option words are
// no hosts.
func TestArgHosts(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want []string
	}{
		{"influxdb=http://10.0.0.5:8086/k6", []string{"10.0.0.5"}},
		{"kafka=brokers=10.0.0.5:9092,topic=k6", []string{"10.0.0.5"}},
		{"--local-ips=10.0.0.5", []string{"10.0.0.5"}},
		{"--dns=ttl=inf,select=first", nil},
		{"csv=results.csv", nil},
		{"web-dashboard=export=dashboard.html", nil},
		{"experimental-prometheus-rw", nil},
		{"--summary-trend-stats=avg,p(99)", nil},
		{"--tag=team=payments", nil},
		{"json=http://[fd00::5]:80/x", []string{"fd00::5"}},
	} {
		if got := ArgHosts(tc.arg); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("ArgHosts(%q) = %q, want %q", tc.arg, got, tc.want)
		}
	}
}
