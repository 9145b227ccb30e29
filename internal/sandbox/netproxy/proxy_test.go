package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestConnectTunnelHalfClose(t *testing.T) {
	addr, accepted := echoServer(t)
	_, port, _ := net.SplitHostPort(addr)
	rec := &recorder{allow: allowOnly("127.0.0.1")}
	p := startProxy(t, Config{Allow: rec.Allow})

	// Spelt the hex way: the proxy judges (and dials) the canonical host.
	c, br := connect(t, p, "0x7f.1:"+port)
	payload := strings.Repeat("0123456789", 10000)
	go func() {
		io.WriteString(c, payload)
		c.(*net.TCPConn).CloseWrite() // the echo server answers only at EOF
	}()
	got, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "echo:"+payload {
		t.Errorf("tunnel returned %d bytes, want %d", len(got), len("echo:"+payload))
	}
	if diff := cmp.Diff([]string{"127.0.0.1:" + port}, rec.Asked()); diff != "" {
		t.Errorf("Allow was asked (-want +got):\n%s", diff)
	}
	if accepted.Load() != 1 {
		t.Errorf("upstream accepted %d connections, want 1", accepted.Load())
	}
}

// TestConnectPipelined sends the CONNECT and the first bytes of the
// tunnel in one write, as clients that skip the round trip do.
func TestConnectPipelined(t *testing.T) {
	addr, _ := echoServer(t)
	p := startProxy(t, Config{Allow: allowOnly("127.0.0.1")})
	c := dialProxy(t, p)
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\nearly bytes", addr); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	const want = "HTTP/1.1 200 Connection Established\r\n\r\necho:early bytes"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestConnectHTTPS(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "secure %s", r.URL.Path)
	}))
	defer up.Close()
	p := startProxy(t, Config{Allow: allowOnly("127.0.0.1")})
	tr := up.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: p.Addr().String()})
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := client.Get(up.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "secure /x" || hits.Load() != 1 {
		t.Errorf("got %q after %d upstream hits", body, hits.Load())
	}
}

func TestForwardPlainHTTP(t *testing.T) {
	type seen struct {
		method, uri, host, body string
		header                  http.Header
	}
	got := make(chan seen, 1)
	port := rawUpstream(t, func(c net.Conn) {
		r, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			t.Errorf("upstream: %v", err)
			return
		}
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, string(b), r.Header.Clone()}
		io.WriteString(c, "HTTP/1.1 418 I'm a teapot\r\nConnection: X-Up-Hop\r\nX-Up-Hop: 1\r\nX-Up-End: 2\r\n"+
			"Keep-Alive: timeout=5\r\nTransfer-Encoding: chunked\r\n\r\n"+
			"6\r\nchunk;\r\n6\r\nchunk;\r\n6\r\nchunk;\r\n0\r\n\r\n")
	})
	p := startProxy(t, Config{Allow: allowOnly("127.0.0.1")})

	c := dialProxy(t, p)
	body := "hello upstream"
	fmt.Fprintf(c, "POST http://2130706433:%s/path?q=1 HTTP/1.1\r\nHost: evil.example\r\n"+
		"Connection: X-Secret, keep-alive\r\nX-Secret: s\r\nProxy-Authorization: Basic Zm9vOmJhcg==\r\n"+
		"Keep-Alive: 300\r\nX-End: e\r\nContent-Length: %d\r\n\r\n%s", port, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTeapot || string(rb) != "chunk;chunk;chunk;" {
		t.Errorf("response %s %q", resp.Status, rb)
	}
	if resp.Header.Get("X-Up-Hop") != "" || resp.Header.Get("Keep-Alive") != "" || resp.Header.Get("X-Up-End") != "2" {
		t.Errorf("response headers not filtered: %v", resp.Header)
	}
	if !resp.Close {
		t.Error("the proxy should close after one forwarded request")
	}
	var s seen
	select {
	case s = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the upstream")
	}
	want := seen{method: "POST", uri: "/path?q=1", host: "127.0.0.1:" + port, body: body}
	if diff := cmp.Diff(want, s, cmp.AllowUnexported(seen{}), cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".header"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("upstream saw (-want +got):\n%s", diff)
	}
	for _, h := range []string{"X-Secret", "Proxy-Authorization", "Keep-Alive", "Proxy-Connection"} {
		if v := s.header.Get(h); v != "" {
			t.Errorf("hop-by-hop header %s reached upstream: %q", h, v)
		}
	}
	if v := s.header.Get("Connection"); v != "" && v != "close" { // the proxy's own hop may say close
		t.Errorf("the client's Connection header reached upstream: %q", v)
	}
	if s.header.Get("X-End") != "e" {
		t.Errorf("end-to-end header lost: %v", s.header)
	}
}

func TestForwardThroughHTTPClient(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "plain "+r.URL.Path)
	}))
	defer up.Close()
	p := startProxy(t, Config{Allow: allowOnly("127.0.0.1")})
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: p.Addr().String()})}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for i := range 3 { // the client reconnects after each Connection: close
		resp, err := client.Get(fmt.Sprintf("%s/%d", up.URL, i))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf("plain /%d", i); string(b) != want {
			t.Errorf("got %q, want %q", b, want)
		}
	}
}

func TestRefusedHostsReachNothing(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	echo, accepted := echoServer(t)
	_, echoPort, _ := net.SplitHostPort(echo)

	dial := &countingDial{}
	var blocked []string
	rec := &recorder{allow: DomainMatcher([]string{"allowed.example"}, nil)}
	p := startProxy(t, Config{Allow: rec.Allow, Dial: dial.Dial, Blocked: func(h string, port int) {
		blocked = append(blocked, net.JoinHostPort(h, fmt.Sprint(port)))
	}})
	tests := []struct {
		name, raw, host string
	}{
		{"CONNECT loopback", "CONNECT 127.0.0.1:" + echoPort + " HTTP/1.1\r\n\r\n", "127.0.0.1:" + echoPort},
		{"CONNECT loopback spelt in decimal", "CONNECT 2130706433:" + echoPort + " HTTP/1.1\r\n\r\n", "127.0.0.1:" + echoPort},
		{"CONNECT mapped IPv6", "CONNECT [::ffff:7f00:1]:" + echoPort + " HTTP/1.1\r\n\r\n", "127.0.0.1:" + echoPort},
		{"CONNECT localhost", "CONNECT LOCALHOST.:" + echoPort + " HTTP/1.1\r\n\r\n", "localhost:" + echoPort},
		{"CONNECT subdomain of the allowed", "CONNECT a.allowed.example:443 HTTP/1.1\r\n\r\n", "a.allowed.example:443"},
		{"GET loopback", "GET http://127.0.0.1:" + port + "/ HTTP/1.1\r\nHost: allowed.example\r\n\r\n", "127.0.0.1:" + port},
		{"GET octal loopback", "GET http://0177.0.0.1:" + port + "/ HTTP/1.1\r\n\r\n", "127.0.0.1:" + port},
		{"GET a name", "GET http://Other.Example./ HTTP/1.1\r\n\r\n", "other.example:80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocked = nil
			resp, body := sendRaw(t, p, tt.raw)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("status %s, want 403", resp.Status)
			}
			if !strings.Contains(body, tt.host) || !strings.Contains(body, "sandbox") || !strings.Contains(body, "blocked") {
				t.Errorf("body %q does not name %s and the sandbox's block", body, tt.host)
			}
			if diff := cmp.Diff([]string{tt.host}, blocked); diff != "" {
				t.Errorf("Blocked calls (-want +got):\n%s", diff)
			}
		})
	}
	if dial.n.Load() != 0 || hits.Load() != 0 || accepted.Load() != 0 {
		t.Errorf("refused requests reached out: %d dials, %d HTTP hits, %d TCP accepts", dial.n.Load(), hits.Load(), accepted.Load())
	}
}

func TestMalformedRequests(t *testing.T) {
	dial := &countingDial{}
	rec := &recorder{allow: func(string, int) bool { return true }}
	p := startProxy(t, Config{Allow: rec.Allow, Dial: dial.Dial, MaxHeaderBytes: 1024})
	tests := []struct {
		name, raw string
		status    int
	}{
		{"garbage", "hello there\r\n\r\n", 400},
		{"bad version", "GET http://a.example/ HTTP/9.9\r\n\r\n", 505},
		{"origin form", "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n", 400},
		{"https absolute form", "GET https://a.example/ HTTP/1.1\r\n\r\n", 400},
		{"ftp absolute form", "GET ftp://a.example/ HTTP/1.1\r\n\r\n", 400},
		{"CONNECT without port", "CONNECT a.example HTTP/1.1\r\n\r\n", 400},
		{"CONNECT with path", "CONNECT /rpc HTTP/1.1\r\n\r\n", 400},
		{"CONNECT port zero", "CONNECT a.example:0 HTTP/1.1\r\n\r\n", 400},
		{"CONNECT port too big", "CONNECT a.example:65536 HTTP/1.1\r\n\r\n", 400},
		{"CONNECT port with sign", "CONNECT a.example:+443 HTTP/1.1\r\n\r\n", 400},
		{"CONNECT empty label", "CONNECT a..example:443 HTTP/1.1\r\n\r\n", 400},
		{"CONNECT bad IPv4", "CONNECT 256.0.0.1:443 HTTP/1.1\r\n\r\n", 400},
		{"CONNECT host ends in a non-number", "CONNECT foo.0x1:443 HTTP/1.1\r\n\r\n", 400},
		{"GET with a zone", "GET http://[fe80::1%25eth0]/ HTTP/1.1\r\n\r\n", 400},
		{"header line without colon", "CONNECT a.example:443 HTTP/1.1\r\nnocolon\r\n\r\n", 400},
		{"header too large", "CONNECT a.example:443 HTTP/1.1\r\nX-Big: " + strings.Repeat("b", 8<<10) + "\r\n\r\n", 431},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _ := sendRaw(t, p, tt.raw)
			if resp.StatusCode != tt.status {
				t.Errorf("status %s, want %d", resp.Status, tt.status)
			}
		})
	}
	if asked := rec.Asked(); len(asked) != 0 || dial.n.Load() != 0 {
		t.Errorf("malformed requests got as far as Allow %q / %d dials", asked, dial.n.Load())
	}
}

func TestCloseEndsOpenTunnels(t *testing.T) {
	hold, eof := holdServer(t)
	p, err := New(Config{Allow: allowOnly("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	// An idle tunnel, a tunnel half-closed by the client (only the
	// upstream-to-client copy still runs), and a client that has not
	// finished its header.
	idle, idleR := connect(t, p, hold)
	half, halfR := connect(t, p, hold)
	if err := half.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	slow := dialProxy(t, p)
	io.WriteString(slow, "CONNECT 127.0.0.1:1 HTTP/1.1\r\n")

	// The half-close has crossed the proxy: it now copies in one
	// direction only, blocked on the upstream.
	select {
	case <-eof:
	case <-time.After(5 * time.Second):
		t.Fatal("the client's half-close never reached the upstream")
	}
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("Close did not return with open tunnels:\n%s", strings.Join(proxyGoroutines(), "\n\n"))
	}
	for name, r := range map[string]io.Reader{"idle": idleR, "half-closed": halfR, "slow": slow} {
		if b, err := io.ReadAll(r); err != nil && !isReset(err) || len(b) != 0 {
			t.Errorf("%s client: read %q, %v after Close; want EOF", name, b, err)
		}
	}
	idle.Close()
	waitNoProxyGoroutines(t)
	if _, err := net.Dial("tcp", p.Addr().String()); err == nil {
		t.Error("the proxy still accepts after Close")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}

func TestHeaderTimeoutRealNetwork(t *testing.T) {
	p := startProxy(t, Config{Allow: allowOnly("127.0.0.1"), HeaderTimeout: 300 * time.Millisecond})
	start := time.Now()
	c := dialProxy(t, p)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // an endless header, one byte at a time
		io.WriteString(c, "GET http://127.0.0.1/ HTTP/1.1\r\nX-Slow: ")
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := io.WriteString(c, "a"); err != nil {
					return
				}
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a trickled header: %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("status %s, want 408", resp.Status)
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Errorf("cut off after %v, before the header timeout", el)
	}
}

func TestCheckResolved(t *testing.T) {
	if err := checkResolved("example.com", "127.0.0.1:443"); err == nil {
		t.Error("a name resolving to loopback was dialled")
	}
	if err := checkResolved("example.com", "[::1]:443"); err == nil {
		t.Error("a name resolving to ::1 was dialled")
	}
	if err := checkResolved("example.com", "0.0.0.0:443"); err == nil {
		t.Error("a name resolving to 0.0.0.0 was dialled")
	}
	if err := checkResolved("example.com", "[::ffff:127.0.0.1]:443"); err == nil {
		t.Error("a name resolving to mapped loopback was dialled")
	}
	if err := checkResolved("example.com", "93.184.216.34:443"); err != nil {
		t.Errorf("a public address was refused: %v", err)
	}
}

func TestDefaultDialLoopbackLiteral(t *testing.T) {
	addr, _ := echoServer(t)
	c, err := defaultDial(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatalf("a loopback literal must be dialled: %v", err)
	}
	c.Close()
}

func TestNewNeedsAllow(t *testing.T) {
	if p, err := New(Config{}); err == nil {
		p.Close()
		t.Error("New without Allow succeeded")
	}
}
