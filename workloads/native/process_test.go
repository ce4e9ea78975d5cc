package native

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
	"github.com/chaosrun/chaosrun/models/arrival"
	"github.com/chaosrun/chaosrun/workloads/stream"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    Shard
		wantErr string
	}{
		{"0/1", Shard{0, 1}, ""},
		{"2/4", Shard{2, 4}, ""},
		{" 999/1000 ", Shard{999, 1000}, ""},
		{"4/4", Shard{}, "want 0 <= I < N"},
		{"-1/2", Shard{}, "want 0 <= I < N"},
		{"0/0", Shard{}, "want 0 <= I < N"},
		{"0/1001", Shard{}, "N <= 1000"},
		{"1", Shard{}, "want I/N"},
		{"a/b", Shard{}, "want I/N"},
		{"$(JOB_COMPLETION_INDEX)/3", Shard{}, "want I/N"},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseShard(%q) err = %v, want one saying %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want || got.String() != strings.TrimSpace(tt.in) {
			t.Errorf("ParseShard(%q) = %v (%s), %v; want %v", tt.in, got, got, err, tt.want)
		}
	}
}

func TestParseResults(t *testing.T) {
	dir := t.TempDir()
	ca, keyFile := testenv.WriteCert(t, []string{"judge"}, nil)
	tests := []struct {
		in      string
		want    string // String() of the result
		wantErr string
	}{
		{"tcp://127.0.0.1:7000", "tcp://127.0.0.1:7000", ""},
		{"tcp://judge.ns:7000?tls=true", "tcp://judge.ns:7000 (TLS)", ""},
		{"tcp://[::1]:7000?ca=" + ca + "&server_name=judge", "tcp://[::1]:7000 (TLS)", ""},
		{"out/results.jsonl", "out/results.jsonl", ""},
		{"tcp://h:1?token=abc", "", "CHAOSRUN_RESULTS_TOKEN"},
		{"tcp://h:1?colour=red", "", `unknown option "colour" (allowed: tls, ca, server_name)`},
		{"tcp://h:1?tls=maybe", "", "want true or false"},
		{"tcp://h:1?tls=false&ca=x", "", "contradicts"},
		{"tcp://h:1?ca=" + filepath.Join(dir, "none.pem"), "", "ca:"},
		{"tcp://h:1?ca=" + keyFile, "", "holds no PEM certificate"},
		{"tcp://h", "", "want tcp://HOST:PORT"},
		{"tcp://:7000", "", "want tcp://HOST:PORT"},
		{"http://h:1", "", "or a file path"},
		{"", "", "or a file path"},
	}
	for _, tt := range tests {
		got, err := ParseResults(tt.in, "tok", os.ReadFile)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseResults(%q) err = %v, want one saying %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("ParseResults(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
		if got.Dial != nil && (got.Dial.Token != "tok" || got.Dial.Wait != connectWait) {
			t.Errorf("ParseResults(%q): token %q wait %s", tt.in, got.Dial.Token, got.Dial.Wait)
		}
	}
}

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets([]string{"bank=http://bank-0:8080,http://bank-1:8080/", "ledger=127.0.0.1:9000"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got["bank"], " ") != "http://bank-0:8080 http://bank-1:8080" || strings.Join(got["ledger"], " ") != "http://127.0.0.1:9000" {
		t.Errorf("targets %v", got)
	}
	for _, bad := range [][]string{{"bank"}, {"=http://x:1"}, {"bank="}, {"bank=ftp://x:1"}, {"bank=http://x:1?q=1"}, {"bank=x:1", "bank=y:1"}} {
		if _, err := ParseTargets(bad); err == nil {
			t.Errorf("ParseTargets(%q): want an error", bad)
		}
	}
	if _, err := URLs(got)("vault"); err == nil || !strings.Contains(err.Error(), "--target vault=") {
		t.Errorf("a service without URLs: err = %v", err)
	}
}

func TestReadSpec(t *testing.T) {
	good, err := json.Marshal(Spec{Seed: 3, Streams: []Stream{{Name: "s", Targets: []string{"http://127.0.0.1:1"}, Method: "GET",
		Path: "/", Timeout: time.Second, Arrival: arrival.Constant(10, 0, time.Second)}}})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSpec("spec.json", good); err != nil || s.Seed != 3 || len(s.Streams) != 1 {
		t.Fatalf("ReadSpec = %+v, %v", s, err)
	}
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty", "", "spec.json: empty"},
		{"syntax", "{\n  \"seed\": 1,\n  \"streams\": [}", "spec.json:3:15: invalid character '}'"},
		{"type", "{\"seed\": \"x\"}", "spec.json:1:13: field seed: a JSON string where uint64 belongs"},
		{"unknown field", `{"sed": 1}`, `unknown field "sed"`},
		{"truncated", `{"seed": 1`, "spec.json:1:11: the JSON ends too early"},
		{"two values", `{"seed": 1} {}`, "more than one JSON value"},
		{"invalid", `{"seed": 1}`, "spec.json: native workload: 0 streams"},
	}
	for _, tt := range tests {
		if _, err := ReadSpec("spec.json", []byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: err = %v, want one saying %q", tt.name, err, tt.wantErr)
		}
	}
}

// TestRunToReceiver runs a shard into a real receiver that wants a token,
// in the clear and over TLS (trusting the receiver's certificate as the
// k6 output would): its windows arrive with the end marker, also when it
// is interrupted.
func TestRunToReceiver(t *testing.T) {
	srv := okServer(t)
	spec := Spec{Seed: 1, Streams: []Stream{{Name: "get", Targets: []string{srv.URL}, Method: "GET", Path: "/", Timeout: time.Second,
		Arrival: arrival.Constant(100, 0, 30*time.Second), Tags: map[string]string{"api": "Get"}}}}
	certFile, keyFile := testenv.WriteCert(t, []string{"judge.test"}, nil)
	serverTLS, err := stream.ServerTLS(context.Background(), certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		tls   *tls.Config
		query string
	}{
		{"clear", nil, ""},
		{"tls", serverTLS, "?ca=" + certFile + "&server_name=judge.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recv, err := stream.ListenWith(context.Background(), stream.Config{Token: "secret", TLS: tc.tls})
			if err != nil {
				t.Fatal(err)
			}
			defer recv.Close()
			res, err := ParseResults("tcp://"+recv.DialAddr()+tc.query, "secret", os.ReadFile)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			t0 := time.Now()
			if _, err := RunTo(ctx, spec, Shard{Index: 1, Count: 2}, res); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(t0); took > 5*time.Second {
				t.Errorf("an interrupted shard took %s to end", took)
			}
			if !recv.WaitEnded(2 * time.Second) {
				t.Fatal("no end marker after an interrupt")
			}
			recv.Close()
			sum := recv.Summary()
			n, _ := total(sum, "http_reqs", map[string]string{"api": "Get"})
			// Half of 100/s for about 1.5 s.
			if n < 40 || n > 110 {
				t.Errorf("%d requests from shard 1 of 2 in 1.5 s at 100/s", n)
			}
			if sum.Hello.Extension != Version {
				t.Errorf("hello names %q", sum.Hello.Extension)
			}
		})
	}
}

// TestRunToRefusals: a shard that cannot run is refused before it
// connects; a receiver that refuses the token ends the run at once.
func TestRunToRefusals(t *testing.T) {
	spec := Spec{Streams: []Stream{{Name: "s", Targets: []string{"http://127.0.0.1:1"}, Method: "GET", Path: "/", Timeout: time.Second,
		Arrival: arrival.Constant(10, 0, time.Second)}}}
	never := Results{File: filepath.Join(t.TempDir(), "no", "such", "folder", "x")}
	if _, err := RunTo(context.Background(), spec, Shard{Index: 2, Count: 2}, never); err == nil || !strings.Contains(err.Error(), "shard 2 of 2") {
		t.Errorf("shard out of range: err = %v", err)
	}
	bad := spec
	bad.Streams = []Stream{{Name: "s"}}
	if _, err := RunTo(context.Background(), bad, Shard{}, never); err == nil || !strings.Contains(err.Error(), "no target URL") {
		t.Errorf("invalid spec: err = %v", err)
	}
	recv, err := stream.ListenWith(context.Background(), stream.Config{Token: "right"})
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	res, _ := ParseResults("tcp://"+recv.DialAddr(), "wrong", os.ReadFile)
	t0 := time.Now()
	_, err = RunTo(context.Background(), spec, Shard{}, res)
	if err == nil || !strings.Contains(err.Error(), "refused") || time.Since(t0) > 5*time.Second {
		t.Errorf("wrong token: err = %v after %s", err, time.Since(t0))
	}
	if _, err := RunTo(context.Background(), spec, Shard{}, never); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unwritable results file: err = %v", err)
	}
}

func FuzzReadSpec(f *testing.F) {
	f.Add([]byte(`{"seed":1,"streams":[{"name":"s","targets":["http://h:1"],"method":"GET","path":"/","timeout":1000000000,"arrival":{"kind":"constant","rate":1}}]}`))
	f.Add([]byte("{\n\"seed\": \"x\"}"))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadSpec("f.json", b)
		if err == nil {
			if verr := s.Validate(); verr != nil {
				t.Fatalf("ReadSpec accepted a spec Validate refuses: %v", verr)
			}
		} else if !strings.HasPrefix(err.Error(), "f.json") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

func FuzzParseResults(f *testing.F) {
	for _, s := range []string{"tcp://h:1", "tcp://h:1?tls=true&server_name=x", "file", "tcp://[::1]:0?ca=/nonexistent", "tcp://h:1?token=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseResults(s, "", func(string) ([]byte, error) { return nil, os.ErrNotExist })
		if err == nil && (r.Dial == nil) == (r.File == "") {
			t.Fatalf("ParseResults(%q) = %+v: want exactly one of a receiver and a file", s, r)
		}
		if _, err := ParseShard(s); err == nil && strings.Count(s, "/") != 1 {
			t.Fatalf("ParseShard(%q) accepted it", s)
		}
	})
}
