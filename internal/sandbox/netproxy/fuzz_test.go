package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// FuzzServe feeds arbitrary bytes to a proxy connection. Whatever comes
// in, the proxy may dial only what Allow approved, in canonical form, and
// answers with a well-formed HTTP response (or nothing).
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		"CONNECT allowed.example:443 HTTP/1.1\r\n\r\n",
		"CONNECT ALLOWED.example.:443 HTTP/1.1\r\n\r\nhello",
		"CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n",
		"CONNECT [::ffff:7f00:1]:80 HTTP/1.0\r\n\r\n",
		"GET http://allowed.example/x HTTP/1.1\r\nConnection: close\r\n\r\n",
		"GET http://2130706433:8080/ HTTP/1.1\r\n\r\n",
		"POST http://allowed.example/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: allowed.example\r\n\r\n",
		"CONNECT allowed.example HTTP/1.1\r\n\r\n",
		"\x16\x03\x01\x00\x05hello",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var mu sync.Mutex
		var dialled []string
		dial := func(_ context.Context, _, addr string) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, addr)
			mu.Unlock()
			return nil, errors.New("no network in the fuzzer")
		}
		ln := newPipeListener()
		p, err := start(Config{Allow: allowOnly("allowed.example"), Dial: dial, HeaderTimeout: time.Second, IdleTimeout: time.Second}, ln)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		c := &scriptConn{in: strings.NewReader(in)}
		p.serve(c) // the input ends in EOF, so serve never waits on a clock
		if out := c.out.Bytes(); len(out) > 0 {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
			if err != nil {
				t.Fatalf("the proxy answered %q with a malformed response %q: %v", in, out, err)
			}
			resp.Body.Close()
		}
		for _, a := range dialled {
			host, _, err := net.SplitHostPort(a)
			if err != nil || host != "allowed.example" {
				t.Fatalf("the proxy dialled %q for %q", a, in)
			}
			if strings.ContainsAny(a, " \r\n") {
				t.Fatalf("dial address %q", a)
			}
		}
	})
}

// scriptConn is a connection that reads a fixed input and records what is
// written to it.
type scriptConn struct {
	in  *strings.Reader
	out bytes.Buffer
}

func (c *scriptConn) Read(b []byte) (int, error)       { return c.in.Read(b) }
func (c *scriptConn) Write(b []byte) (int, error)      { return c.out.Write(b) }
func (c *scriptConn) Close() error                     { return nil }
func (c *scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }
