package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is an Allow function that records what it was asked.
type recorder struct {
	mu    sync.Mutex
	asked []string
	allow func(host string, port int) bool
}

func (r *recorder) Allow(host string, port int) bool {
	r.mu.Lock()
	r.asked = append(r.asked, net.JoinHostPort(host, fmt.Sprint(port)))
	r.mu.Unlock()
	return r.allow(host, port)
}

func (r *recorder) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// countingDial wraps the default dial and counts calls.
type countingDial struct{ n atomic.Int64 }

func (d *countingDial) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.n.Add(1)
	return defaultDial(ctx, network, addr)
}

func startProxy(t testing.TB, cfg Config) *Proxy {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// dialProxy opens a raw connection to p with a deadline that turns a hang
// into a failure.
func dialProxy(t testing.TB, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// sendRaw writes a raw request and reads the response the proxy gives.
func sendRaw(t testing.TB, p *Proxy, raw string) (*http.Response, string) {
	t.Helper()
	c := dialProxy(t, p)
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the proxy's answer to %q: %v", raw, err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// connect opens a tunnel to target through p and returns the connection
// and the reader past the proxy's 200.
func connect(t testing.TB, p *Proxy, target string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c := dialProxy(t, p)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s: %s", target, resp.Status)
	}
	return c, br
}

// echoServer accepts TCP connections, reads each to EOF and then writes
// back what it read, prefixed, and closes: a peer that needs half-close.
func echoServer(t testing.TB) (addr string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int64)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				b, err := io.ReadAll(c)
				if err != nil {
					return
				}
				fmt.Fprintf(c, "echo:%s", b)
			}()
		}
	}()
	return ln.Addr().String(), accepted
}

// holdServer accepts connections and keeps them open until the test
// ends; each connection that reads EOF (its peer half-closed) is reported
// on eof, and stays open.
func holdServer(t testing.TB) (addr string, eof <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	eofs := make(chan struct{}, 16)
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := io.Copy(io.Discard, c); err == nil {
					eofs <- struct{}{}
				}
			}()
		}
	}()
	return ln.Addr().String(), eofs
}

// proxyGoroutines lists the stacks of live goroutines running proxy code.
func proxyGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "netproxy.(*Proxy)") || strings.Contains(g, "netproxy.pipe") {
			out = append(out, g)
		}
	}
	return out
}

// waitNoProxyGoroutines fails unless every proxy goroutine is gone within
// a generous bound; the poll only absorbs a goroutine's last instructions
// after its WaitGroup.Done.
func waitNoProxyGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := proxyGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d proxy goroutines left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func allowOnly(hosts ...string) func(string, int) bool {
	return func(h string, _ int) bool {
		for _, a := range hosts {
			if h == a {
				return true
			}
		}
		return false
	}
}

// rawUpstream serves each TCP connection with handle and returns the port.
func rawUpstream(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				handle(c)
			}()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}
