package httpstage

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReadHead(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		request bool
		want    error
		check   func(t *testing.T, h *head)
	}{
		{name: "get keep-alive", in: "GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n", request: true, check: func(t *testing.T, h *head) {
			if string(h.method) != "GET" || string(h.path()) != "/a" || !h.keepAlive || h.requestFraming() != noBody {
				t.Errorf("got %s path %s keep %v framing %v", h, h.path(), h.keepAlive, h.requestFraming())
			}
		}},
		{name: "post length", in: "POST /t HTTP/1.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\n", request: true, check: func(t *testing.T, h *head) {
			if h.length != 5 || h.keepAlive || h.requestFraming() != lengthBody {
				t.Errorf("length %d keep %v", h.length, h.keepAlive)
			}
		}},
		{name: "chunked bare LF", in: "POST /t HTTP/1.1\nTransfer-Encoding: gzip, chunked\n\n", request: true, check: func(t *testing.T, h *head) {
			if !h.chunked || h.requestFraming() != chunkedBody {
				t.Error("not chunked")
			}
		}},
		{name: "http/1.0 keep-alive", in: "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", request: true, check: func(t *testing.T, h *head) {
			if !h.keepAlive || h.minor != 0 {
				t.Error("want keep-alive 1.0")
			}
		}},
		{name: "leading CRLF", in: "\r\nGET / HTTP/1.1\r\n\r\n", request: true},
		{name: "absolute form", in: "GET http://h:1/x/y?q HTTP/1.1\r\n\r\n", request: true, check: func(t *testing.T, h *head) {
			if string(h.path()) != "/x/y" {
				t.Errorf("path %q", h.path())
			}
		}},
		{name: "expect", in: "PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n", request: true, check: func(t *testing.T, h *head) {
			if !h.expect100 {
				t.Error("no expect")
			}
		}},
		{name: "response chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", check: func(t *testing.T, h *head) {
			if h.status != 200 || h.responseFraming([]byte("GET")) != chunkedBody || h.responseFraming([]byte("HEAD")) != noBody {
				t.Error("framing")
			}
		}},
		{name: "response until close", in: "HTTP/1.0 200 OK\r\n\r\n", check: func(t *testing.T, h *head) {
			if h.responseFraming([]byte("GET")) != closeBody || h.keepAlive {
				t.Error("want close-delimited")
			}
		}},
		{name: "response 101", in: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", check: func(t *testing.T, h *head) {
			if h.responseFraming([]byte("GET")) != tunnelBody {
				t.Error("want tunnel")
			}
		}},
		{name: "response 204 no reason", in: "HTTP/1.1 204\r\n\r\n", check: func(t *testing.T, h *head) {
			if h.responseFraming([]byte("GET")) != noBody {
				t.Error("want no body")
			}
		}},
		{name: "eof", in: "", request: true, want: io.EOF},
		{name: "garbage", in: "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n", request: true, want: errMalformed},
		{name: "truncated head", in: "GET / HTTP/1.1\r\nHost: x\r\n", request: true, want: errMalformed},
		{name: "http/2 preface", in: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", request: true, want: errMalformed},
		{name: "obs-fold", in: "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", request: true, want: errMalformed},
		{name: "no colon", in: "GET / HTTP/1.1\r\nAb\r\n\r\n", request: true, want: errMalformed},
		{name: "two lengths", in: "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", request: true, want: errMalformed},
		{name: "length and chunked", in: "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", request: true, want: errMalformed},
		{name: "te not chunked", in: "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", request: true, want: errMalformed},
		{name: "negative length", in: "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", request: true, want: errMalformed},
		{name: "long line", in: "GET /" + strings.Repeat("a", maxLineBytes) + " HTTP/1.1\r\n\r\n", request: true, want: errMalformed},
		{name: "bad status", in: "HTTP/1.1 2x0 OK\r\n\r\n", want: errMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tt.in), maxLineBytes)
			var h head
			err := readHead(r, &h, tt.request)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("readHead = %v, want %v", err, tt.want)
			}
			if errors.Is(err, errMalformed) {
				rest, _ := io.ReadAll(r)
				if got := string(h.raw) + string(rest); got != tt.in {
					t.Errorf("raw + rest = %q, want every byte of the input", got)
				}
			}
			if err == nil && string(h.raw) != tt.in {
				t.Errorf("raw = %q, want %q", h.raw, tt.in)
			}
			if tt.check != nil && err == nil {
				tt.check(t, &h)
			}
		})
	}
}

func TestCopyChunked(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
	}{
		{name: "two chunks", in: "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n"},
		{name: "trailer", in: "1\r\na\r\n0\r\nX-T: 1\r\n\r\n"},
		{name: "bad size", in: "zz\r\nhello\r\n0\r\n\r\n", want: errMalformed},
		{name: "missing crlf", in: "1\r\nab0\r\n\r\n", want: errMalformed},
		{name: "truncated", in: "5\r\nhel", want: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := copyChunked(&out, bufio.NewReader(strings.NewReader(tt.in+"NEXT")))
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("copyChunked = %v, want %v", err, tt.want)
			}
			if err == nil && out.String() != tt.in {
				t.Errorf("copied %q, want %q", out.String(), tt.in)
			}
		})
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"/transact/cash", "/transact/cash", true},
		{"/transact/cash", "/transact/cashx", false},
		{"/transact/*", "/transact/cash", true},
		{"/kv/user1*", "/kv/user17/x", true},
		{"/kv/user1*", "/kv/user2", false},
		{"*/cash", "/a/b/cash", true},
		{"/a?c", "/abc", true},
		{"/a?c", "/ac", false},
		{"*", "", true},
		{"", "", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
	}
	for _, tt := range tests {
		if got := globMatch(tt.pattern, []byte(tt.s)); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestNewRule(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string
		toxic   Toxic
		wantErr string
	}{
		{name: "error default status", toxic: Toxic{Name: "e", Type: KindError}},
		{name: "latency lognormal", toxic: Toxic{Name: "l", Type: KindLatency, Attributes: Attributes{Latency: 100, P99: 400}}},
		{name: "no name", toxic: Toxic{Type: KindError}, wantErr: "no name"},
		{name: "unknown type", toxic: Toxic{Name: "x", Type: "http_nope"}, wantErr: `unknown type "http_nope"`},
		{name: "status range", toxic: Toxic{Name: "x", Type: KindError, Attributes: Attributes{Status: 700}}, wantErr: "status 700"},
		{name: "toxicity", toxic: Toxic{Name: "x", Type: KindError, Toxicity: f(1.5)}, wantErr: "toxicity 1.5"},
		{name: "jitter and p99", toxic: Toxic{Name: "x", Type: KindLatency, Attributes: Attributes{Latency: 1, Jitter: 1, P99: 5}}, wantErr: "exclude"},
		{name: "p99 below median", toxic: Toxic{Name: "x", Type: KindLatency, Attributes: Attributes{Latency: 10, P99: 5}}, wantErr: "must exceed"},
		{name: "bad regex", toxic: Toxic{Name: "x", Type: KindError, Attributes: Attributes{PathRegex: "("}}, wantErr: "path_regex"},
		{name: "bad method", toxic: Toxic{Name: "x", Type: KindError, Attributes: Attributes{Method: "GE T"}}, wantErr: "method"},
		{name: "bad header", toxic: Toxic{Name: "x", Type: KindError, Attributes: Attributes{Header: map[string]string{"a b": "c"}}}, wantErr: "header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newRule(tt.toxic, 1)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("newRule = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestRuleDecide(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	req := func(s string) *head {
		var h head
		if err := readHead(bufio.NewReader(strings.NewReader(s)), &h, true); err != nil {
			t.Fatal(err)
		}
		return &h
	}
	cash := req("POST /transact/cash HTTP/1.1\r\nX-Caller: rogue-7\r\n\r\n")
	check := req("POST /transact/check HTTP/1.1\r\nX-Caller: good\r\n\r\n")
	tests := []struct {
		name       string
		attrs      Attributes
		cash, chek bool
	}{
		{name: "everything", cash: true, chek: true},
		{name: "path", attrs: Attributes{Path: "/transact/cash"}, cash: true},
		{name: "regex", attrs: Attributes{PathRegex: "ch(ec|xx)k$"}, chek: true},
		{name: "method", attrs: Attributes{Method: "get"}},
		{name: "method case", attrs: Attributes{Method: "post"}, cash: true, chek: true},
		{name: "header glob", attrs: Attributes{Header: map[string]string{"x-caller": "rogue-*"}}, cash: true},
		{name: "all of them", attrs: Attributes{Method: "POST", Path: "/transact/*", Header: map[string]string{"X-Caller": "good"}}, chek: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := newRule(Toxic{Name: "t", Type: KindError, Attributes: tt.attrs}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := r.decide(cash); got != tt.cash {
				t.Errorf("cash: %v, want %v", got, tt.cash)
			}
			if got, _ := r.decide(check); got != tt.chek {
				t.Errorf("check: %v, want %v", got, tt.chek)
			}
		})
	}

	// Toxicity and distributions, over many draws with a fixed seed.
	r, _ := newRule(Toxic{Name: "t", Type: KindLatency, Toxicity: f(0.25), Attributes: Attributes{Latency: 100, P99: 400}}, 42)
	var hits int
	var delays []time.Duration
	for range 20000 {
		if hit, d := r.decide(cash); hit {
			hits++
			delays = append(delays, d)
		}
	}
	if hits < 4500 || hits > 5500 {
		t.Errorf("toxicity 0.25 hit %d of 20000", hits)
	}
	slices.Sort(delays)
	med, p99 := delays[len(delays)/2], delays[len(delays)*99/100]
	if med < 90*time.Millisecond || med > 110*time.Millisecond || p99 < 320*time.Millisecond || p99 > 500*time.Millisecond {
		t.Errorf("lognormal median %s p99 %s, want ~100ms and ~400ms", med, p99)
	}
	u, _ := newRule(Toxic{Name: "u", Type: KindLatency, Attributes: Attributes{Latency: 100, Jitter: 50}}, 42)
	for range 1000 {
		if _, d := u.decide(cash); d < 50*time.Millisecond || d > 150*time.Millisecond {
			t.Fatalf("uniform 100±50ms drew %s", d)
		}
	}
	if st := r.snapshot().Stats; st.Seen != 20000 || st.Matched != 20000 || st.Affected != int64(hits) {
		t.Errorf("stats %+v, want 20000/20000/%d", st, hits)
	}
}
