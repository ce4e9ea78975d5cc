package httpstage

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	fuzzOnce  sync.Once
	fuzzUp    *httptest.Server
	fuzzStage *Stage
)

// FuzzStage writes arbitrary bytes to a stage in front of a real HTTP
// server, with toxics that match some requests, and checks that the stage
// neither panics nor hangs: every connection ends once the client closes.
func FuzzStage(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /a HTTP/1.1\r\n\r\nPOST /transact/cash HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\n\r\n",
		"POST /transact/cash HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"PUT /transact/cash HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
		"HEAD /transact/cash HTTP/1.0\r\n\r\n",
		"GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
		"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	fuzzOnce.Do(func() {
		fuzzUp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
			io.WriteString(w, "ok")
		}))
		var err error
		fuzzStage, err = New("fuzz", "127.0.0.1:0", fuzzUp.Listener.Addr().String(), 1)
		if err != nil {
			panic(err)
		}
		half := 0.5
		fuzzStage.Add(Toxic{Name: "e", Type: KindError, Toxicity: &half, Attributes: Attributes{Path: "/transact/*"}})
		fuzzStage.Add(Toxic{Name: "l", Type: KindLatency, Attributes: Attributes{Latency: 0, Method: "GET"}})
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := net.Dial("tcp", fuzzStage.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		go func() {
			c.Write(in)
			c.(*net.TCPConn).CloseWrite()
		}()
		// The stage must end the connection: the upstream answers or
		// closes, and the stage follows, never waiting on a closed client.
		if _, err := io.Copy(io.Discard, bufio.NewReader(c)); err != nil && !isReset(err) {
			t.Fatalf("connection did not end cleanly: %v (input %q)", err, in)
		}
	})
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}
