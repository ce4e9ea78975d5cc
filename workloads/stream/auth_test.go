package stream

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/models/wire"
)

// testCert makes a self-signed certificate for 127.0.0.1 and localhost, and
// a pool that trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "chaosrun test receiver"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// client is one output connection: it sends lines and reads the reply.
type client struct {
	c  net.Conn
	br *bufio.Reader
}

func dialClient(t *testing.T, addr string, tlsCfg *tls.Config) *client {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	var c net.Conn
	var err error
	if tlsCfg != nil {
		c, err = tls.DialWithDialer(d, "tcp", addr, tlsCfg)
	} else {
		c, err = d.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{c: c, br: bufio.NewReader(c)}
}

func (cl *client) send(t *testing.T, lines ...string) {
	t.Helper()
	if _, err := cl.c.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
}

// reply reads the receiver's answer to the hello.
func (cl *client) reply(t *testing.T) wire.Answer {
	t.Helper()
	_ = cl.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := cl.br.ReadBytes('\n')
	if err != nil {
		t.Fatalf("no reply to the hello: %v", err)
	}
	var r wire.Answer
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("reply %q: %v", line, err)
	}
	return r
}

func hello(token string) string {
	if token == "" {
		return `{"type":"hello","version":1,"extension":"test"}`
	}
	return `{"type":"hello","version":1,"extension":"test","token":"` + token + `"}`
}

const (
	oneWindow = `{"type":"window","start":"2026-01-01T00:00:00Z","series":[{"metric":"http_reqs","kind":"counter","count":3,"sum":3}]}`
	endLine   = `{"type":"end","dropped":0}`
)

func TestReceiverToken(t *testing.T) {
	cert, pool := testCert(t)
	serverTLS := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	clientTLS := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	tests := []struct {
		name       string
		cfg        Config
		clientTLS  *tls.Config
		first      string
		wantReply  string // welcome, refused, or "" for no answer
		wantReason string // in the refusal and the summary
	}{
		{"loopback without token still works", Config{}, nil, hello(""), "", ""},
		{"loopback ignores a token it does not need", Config{}, nil, hello("anything"), "welcome", ""},
		{"right token accepted", Config{Token: "s3cret"}, nil, hello("s3cret"), "welcome", ""},
		{"wrong token refused", Config{Token: "s3cret"}, nil, hello("s3cre7"), "refused", "wrong token"},
		{"missing token refused", Config{Token: "s3cret"}, nil, hello(""), "refused", "has no token"},
		{"window before hello refused", Config{Token: "s3cret"}, nil, oneWindow, "refused", "not a hello"},
		{"old wire version refused", Config{Token: "s3cret"}, nil, `{"type":"hello","version":9,"token":"s3cret"}`, "refused", "wire version 9"},
		{"TLS round trip", Config{Token: "s3cret", TLS: serverTLS}, clientTLS, hello("s3cret"), "welcome", ""},
		{"TLS with a wrong token refused", Config{Token: "s3cret", TLS: serverTLS}, clientTLS, hello("nope"), "refused", "wrong token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []error
			cfg := tt.cfg
			cfg.OnRefused = func(err error) { seen = append(seen, err) }
			r, err := ListenWith(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cl := dialClient(t, r.Addr(), tt.clientTLS)
			cl.send(t, tt.first)
			if tt.wantReply != "" {
				// A hello without a token gets no answer: older outputs do not read one.
				got := cl.reply(t)
				if got.Type != tt.wantReply || !strings.Contains(got.Error, tt.wantReason) {
					t.Fatalf("reply %+v, want %s with %q", got, tt.wantReply, tt.wantReason)
				}
			}
			if tt.wantReply != "refused" {
				cl.send(t, oneWindow, endLine)
				if !r.WaitEnded(5 * time.Second) {
					t.Fatal("no end after the hello was let in")
				}
			}
			cl.c.Close()
			r.Close()
			sum := r.Summary()
			if tt.wantReply == "refused" {
				if sum.Refused != 1 || len(sum.RefusedErrors) != 1 || !strings.Contains(sum.RefusedErrors[0].Error(), tt.wantReason) ||
					!strings.Contains(sum.RefusedErrors[0].Error(), "connection 1 from 127.0.0.1:") {
					t.Fatalf("refused %d %v; want one naming the connection and %q", sum.Refused, sum.RefusedErrors, tt.wantReason)
				}
				if len(seen) != 1 || len(sum.Windows) != 0 || sum.Malformed != 0 {
					t.Fatalf("OnRefused saw %v; windows %v; malformed %d", seen, sum.Windows, sum.Malformed)
				}
				select {
				case <-r.Started():
					t.Fatal("a refused connection started the load")
				default:
				}
				return
			}
			if sum.Refused != 0 || sum.Malformed != 0 || len(sum.Windows) != 1 || sum.Windows[0].Series[0].Count != 3 {
				t.Fatalf("summary %+v", sum)
			}
		})
	}
}

func TestReceiverPlainClientOnTLS(t *testing.T) {
	cert, _ := testCert(t)
	r, err := ListenWith(context.Background(), Config{Token: "s3cret", TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	cl := dialClient(t, r.Addr(), nil)
	cl.send(t, hello("s3cret"))
	for i := 0; i < 100 && r.Summary().Refused == 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	r.Close()
	sum := r.Summary()
	if sum.Refused != 1 || !strings.Contains(sum.RefusedErrors[0].Error(), "TLS handshake") {
		t.Fatalf("refused %d %v; want a TLS handshake refusal", sum.Refused, sum.RefusedErrors)
	}
}

func TestListenNeedsTokenOffLoopback(t *testing.T) {
	tests := []struct {
		addr, token, want string
	}{
		{"192.0.2.1:0", "", "token is required"},
		{"[2001:db8::1]:0", "", "token is required"},
		{"nonsense", "t", "not HOST:PORT"},
	}
	for _, tt := range tests {
		if _, err := ListenWith(context.Background(), Config{Addr: tt.addr, Token: tt.token}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ListenWith(%s): err = %v, want %q", tt.addr, err, tt.want)
		}
	}
}

func TestDialAddr(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 7000}, "127.0.0.1:7000"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 7000}, "127.0.0.1:7000"},
		{&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 7000}, "10.1.2.3:7000"},
	}
	for _, tt := range tests {
		if got := dialAddr(tt.addr); got != tt.want {
			t.Errorf("dialAddr(%s) = %s, want %s", tt.addr, got, tt.want)
		}
	}
}
