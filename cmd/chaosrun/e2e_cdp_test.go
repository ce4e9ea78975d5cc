package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chaosrun/chaosrun/internal/testenv"
)

// A minimal Chrome DevTools Protocol client: headless Chromium with
// --remote-debugging-port=0, one page target, JSON messages over a
// hand-written WebSocket client (text frames, client masking).

type browser struct {
	cmd  *exec.Cmd
	conn net.Conn
	r    *bufio.Reader
	id   int
}

// startBrowser starts headless Chromium and connects to its first page.
// Outside CI a missing chromium skips the test; with CI=true it fails.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	path := testenv.Tool(t, "chromium", "chromium")
	// Not t.TempDir: Chromium's helper processes may still write to the
	// profile while the test's own cleanup removes it.
	dir, err := os.MkdirTemp("", "chaosrun-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--disable-crash-reporter", "--remote-debugging-port=0", "--remote-allow-origins=*", "--window-size=1400,1000",
		"--user-data-dir="+filepath.Join(dir, "profile"), "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers end with it
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)         // and its temporary files with the profile
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &browser{cmd: cmd}
	t.Cleanup(func() { b.close(t, dir) })
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`DevTools listening on (ws://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	var wsURL string
	select {
	case wsURL = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("chromium did not print its DevTools address within 30s")
	}
	u, _ := url.Parse(wsURL)
	resp, err := http.Get("http://" + u.Host + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	var targets []struct{ Type, WebSocketDebuggerURL string }
	json.NewDecoder(resp.Body).Decode(&targets)
	resp.Body.Close()
	for _, tg := range targets {
		if tg.Type == "page" {
			if err := b.dial(tg.WebSocketDebuggerURL); err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("chromium has no page target: %+v", targets)
	return nil
}

// close ends Chromium and every helper process it started, then removes
// its profile, retrying while the last writes settle.
func (b *browser) close(t *testing.T, dir string) {
	if b.conn != nil {
		b.conn.Close()
	}
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	b.cmd.Wait()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
	}
	t.Errorf("chromium profile not removed: %v", err)
}

func (b *browser) dial(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return err
	}
	key := make([]byte, 16)
	rand.Read(key)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(key))
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		c.Close()
		return err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return fmt.Errorf("websocket handshake: %s", resp.Status)
	}
	b.conn, b.r = c, r
	return nil
}

func (b *browser) send(msg []byte) error {
	hdr := []byte{0x81} // FIN, text
	n := len(msg)
	switch {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	mask := make([]byte, 4)
	rand.Read(mask)
	hdr = append(hdr, mask...)
	out := make([]byte, n)
	for i := range msg {
		out[i] = msg[i] ^ mask[i%4]
	}
	_, err := b.conn.Write(append(hdr, out...))
	return err
}

// recv reads one whole message (joining fragments; answering pings).
func (b *browser) recv() ([]byte, error) {
	var msg []byte
	for {
		h := make([]byte, 2)
		if _, err := io.ReadFull(b.r, h); err != nil {
			return nil, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			e := make([]byte, 2)
			if _, err := io.ReadFull(b.r, e); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(e))
		case 127:
			e := make([]byte, 8)
			if _, err := io.ReadFull(b.r, e); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(e)
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(b.r, p); err != nil {
			return nil, err
		}
		switch op {
		case 0x8:
			return nil, errors.New("websocket closed")
		case 0x9, 0xA:
			continue
		}
		msg = append(msg, p...)
		if fin {
			return msg, nil
		}
	}
}

// call sends a CDP command and returns its result, skipping events.
func (b *browser) call(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	b.id++
	req, _ := json.Marshal(map[string]any{"id": b.id, "method": method, "params": params})
	b.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := b.send(req); err != nil {
		t.Fatalf("cdp %s: %v", method, err)
	}
	for {
		m, err := b.recv()
		if err != nil {
			t.Fatalf("cdp %s: %v", method, err)
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct{ Message string }
		}
		if json.Unmarshal(m, &resp) != nil || resp.ID != b.id {
			continue
		}
		if resp.Error != nil {
			t.Fatalf("cdp %s: %s", method, resp.Error.Message)
		}
		return resp.Result
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value
// into out (nil to ignore it).
func (b *browser) eval(t *testing.T, expr string, out any) {
	t.Helper()
	res := b.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct{ Text string } `json:"exceptionDetails"`
	}
	json.Unmarshal(res, &r)
	if r.ExceptionDetails != nil {
		t.Fatalf("page: %s: %s", expr, r.ExceptionDetails.Text)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			t.Fatalf("page: %s: value %s: %v", expr, r.Result.Value, err)
		}
	}
}

func (b *browser) screenshot(t *testing.T, path string) {
	t.Helper()
	var r struct{ Data string }
	json.Unmarshal(b.call(t, "Page.captureScreenshot", map[string]any{"format": "png"}), &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil || len(png) == 0 {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls a boolean expression until it holds or timeout passes.
func (b *browser) waitFor(t *testing.T, what, expr string, timeout time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	for time.Since(t0) < timeout {
		var ok bool
		b.eval(t, "!!("+expr+")", &ok)
		if ok {
			return time.Since(t0)
		}
		time.Sleep(250 * time.Millisecond)
	}
	var state string
	b.eval(t, `JSON.stringify((window.gameday.last||{}).slos||null)`, &state)
	t.Fatalf("%s: not within %s (SLOs: %s)", what, timeout, state)
	return 0
}

// quote makes s a JavaScript string literal.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "</", "<\\/")
}
