package resilience

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.k6.io/k6/metrics"

	"github.com/chaosrun/chaosrun/models/wire"
)

// testCert makes a self-signed certificate for 127.0.0.1 and writes it as
// a PEM file the ca option can read.
func testCert(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "test harness"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"harness.test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, path
}

func TestParseTCPOptions(t *testing.T) {
	_, ca := testCert(t)
	tests := []struct {
		name, arg string
		env       map[string]string
		wantErr   string
		token     string
		tls       bool
		server    string
	}{
		{"plain", "tcp://127.0.0.1:4000", nil, "", "", false, ""},
		{"token in the query", "tcp://10.0.0.5:4000?token=abc", nil, "", "abc", false, ""},
		{"token from the environment", "tcp://10.0.0.5:4000", map[string]string{"K6_RESILIENCE_TOKEN": "env"}, "", "env", false, ""},
		{"the query wins over the environment", "tcp://10.0.0.5:4000?token=q", map[string]string{"K6_RESILIENCE_TOKEN": "env"}, "", "q", false, ""},
		{"tls with system roots", "tcp://harness.example:4000?tls=true", nil, "", "", true, "harness.example"},
		{"tls and ca from the environment", "tcp://10.0.0.5:4000", map[string]string{"K6_RESILIENCE_TLS": "true", "K6_RESILIENCE_CA": ca}, "", "", true, "10.0.0.5"},
		{"ca implies tls", "tcp://127.0.0.1:4000?ca=" + ca + "&server_name=harness.test", nil, "", "", true, "harness.test"},
		{"unknown option", "tcp://127.0.0.1:4000?tokn=abc", nil, `unknown option "tokn"`, "", false, ""},
		{"bad tls value", "tcp://127.0.0.1:4000?tls=maybe", nil, "want true or false", "", false, ""},
		{"tls=false with a ca", "tcp://127.0.0.1:4000?tls=false&ca=" + ca, nil, "contradicts", "", false, ""},
		{"missing ca file", "tcp://127.0.0.1:4000?ca=/nonexistent/ca.pem", nil, "ca:", "", false, ""},
		{"no port", "tcp://127.0.0.1?token=a", nil, "not tcp://HOST:PORT", "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.arg, tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.token != tt.token || (c.tls != nil) != tt.tls || (c.tls != nil && c.tls.ServerName != tt.server) {
				t.Fatalf("config %+v", c)
			}
		})
	}
}

// fakeReceiver answers the first hello of each connection as answer says
// and hands over what the connection sent.
func fakeReceiver(t *testing.T, ln net.Listener, answer func(hello map[string]any) wire.Answer) <-chan []string {
	t.Helper()
	got := make(chan []string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
				br := bufio.NewReader(c)
				first, err := br.ReadBytes('\n')
				if err != nil {
					got <- nil
					return
				}
				var h map[string]any
				_ = json.Unmarshal(first, &h)
				b, _ := json.Marshal(answer(h))
				_, _ = c.Write(append(b, '\n'))
				lines := []string{string(first)}
				for {
					l, err := br.ReadString('\n')
					if err != nil {
						break
					}
					lines = append(lines, l)
				}
				got <- lines
			}()
		}
	}()
	return got
}

func checkToken(want string) func(map[string]any) wire.Answer {
	return func(h map[string]any) wire.Answer {
		if h["token"] != want {
			return wire.Answer{Type: wire.TypeRefused, Error: "wrong token in its hello"}
		}
		return wire.Answer{Type: wire.TypeWelcome}
	}
}

func TestOutputToken(t *testing.T) {
	cert, ca := testCert(t)
	tests := []struct {
		name    string
		tls     bool
		query   string
		wantErr string
	}{
		{"right token", false, "?token=s3cret", ""},
		{"wrong token refused at start", false, "?token=nope", "refused the stream: wrong token"},
		{"TLS round trip", true, "?token=s3cret&ca=" + ca, ""},
		{"TLS with the name on the certificate", true, "?token=s3cret&ca=" + ca + "&server_name=harness.test", ""},
		{"TLS with a name not on the certificate", true, "?token=s3cret&ca=" + ca + "&server_name=other.test", "certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ln net.Listener
			var err error
			if tt.tls {
				ln, err = tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
			} else {
				ln, err = net.Listen("tcp", "127.0.0.1:0")
			}
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			got := fakeReceiver(t, ln, checkToken("s3cret"))
			o := newTestOutput(t, "tcp://"+ln.Addr().String()+tt.query)
			start := time.Now()
			err = o.Start()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Start: err = %v, want %q", err, tt.wantErr)
				}
				if el := time.Since(start); el > 2*time.Second {
					t.Fatalf("a refusal took %v: it must not be retried", el)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			o.AddMetricSamples([]metrics.SampleContainer{metrics.Samples(goldenSamples(metrics.NewRegistry()))})
			if err := o.Stop(); err != nil {
				t.Fatal(err)
			}
			lines := <-got
			var data []byte
			for _, l := range lines {
				data = append(data, l...)
			}
			parsed := readLines(t, data)
			checkStream(t, parsed, 5)
			if parsed[0]["token"] != "s3cret" {
				t.Fatalf("hello %v does not carry the token", parsed[0])
			}
		})
	}
}

// TestHelloWithoutTokenDoesNotWait: an output without a token does not
// wait for an answer (receivers do not send one to such a hello).
func TestHelloWithoutTokenDoesNotWait(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			time.Sleep(3 * time.Second) // never answers
		}
	}()
	start := time.Now()
	s, err := dialTCP(tcpOptions{addr: ln.Addr().String()}, []byte(`{"type":"hello"}`+"\n"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if el := time.Since(start); el > time.Second {
		t.Fatalf("connect took %v", el)
	}
}
