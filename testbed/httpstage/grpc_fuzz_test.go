package httpstage

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Frames writes frames as a client would after the preface.
func h2Frames(write func(fr *http2.Framer)) []byte {
	var b bytes.Buffer
	write(http2.NewFramer(&b, nil))
	return b.Bytes()
}

// grpcHeaders is an HPACK block of a gRPC call's request headers.
func grpcHeaders(path string) []byte {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", path}, {":authority", "stage"},
		{"content-type", "application/grpc"}, {"te", "trailers"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	return b.Bytes()
}

// FuzzH2: whatever follows the HTTP/2 preface (frames well or badly
// formed, truncated, out of order) is relayed to a real gRPC server,
// answered with a protocol error or dropped, with calls answered and held
// in both directions by toxics: the stage never panics or hangs, and its
// toxics stay in force. Each input has 300 ms.
func FuzzH2(f *testing.F) {
	call := grpcHeaders(checkMethod)
	f.Add(h2Frames(func(fr *http2.Framer) {
		fr.WriteSettings()
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: call, EndHeaders: true})
		fr.WriteData(1, true, []byte{0, 0, 0, 0, 0})
	}))
	f.Add(h2Frames(func(fr *http2.Framer) {
		fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: grpcHeaders(listMethod), EndHeaders: true, EndStream: true})
		fr.WriteRSTStream(3, http2.ErrCodeCancel)
		fr.WriteGoAway(3, http2.ErrCodeNo, []byte("bye"))
	}))
	f.Add(h2Frames(func(fr *http2.Framer) {
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 2, BlockFragment: call[:5]}) // even id, no END_HEADERS
		fr.WriteContinuation(2, true, call[5:])
		fr.WritePing(false, [8]byte{1})
		fr.WriteWindowUpdate(0, 1<<30)
	}))
	f.Add([]byte{0, 0, 9, 1, 4, 0, 0, 0, 1}) // a HEADERS frame cut short
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	up := startGRPCUpstream(f)
	stage, err := New("fuzz", "127.0.0.1:0", up, 1)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { stage.Close() })
	for _, tx := range []Toxic{grpcToxic("e", KindGRPCError, listMethod, Attributes{}),
		grpcToxic("held", KindGRPCLatency, checkMethod, Attributes{Latency: 1}),
		grpcToxic("held-answer", KindGRPCLatency, checkMethod, Attributes{Latency: 1, Response: 1})} {
		if _, err := stage.Add(tx); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := net.Dial("tcp", stage.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := c.Write(append([]byte(http2.ClientPreface), data...)); err != nil {
			return // the stage closed first: a protocol error
		}
		c.(*net.TCPConn).CloseWrite() // the input ends here
		io.Copy(io.Discard, c)        // until the stage closes or the deadline
		if _, ok := stage.Get("e"); !ok {
			t.Fatal("toxic gone after the input")
		}
	})
}
