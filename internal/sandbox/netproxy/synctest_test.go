package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener hands the proxy in-memory connections, so that a test can
// run it inside a synctest bubble (fake clock, and every goroutine must
// have ended when the bubble does).
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "pipe"} }

// dial connects a client to the proxy.
func (l *pipeListener) dial() net.Conn {
	c, s := net.Pipe()
	l.conns <- s
	return c
}

func TestHeaderTimeoutIsAbsolute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		p, err := start(Config{Allow: allowOnly("a.example"), HeaderTimeout: 10 * time.Second}, ln)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		c := ln.dial()
		defer c.Close()
		begin := time.Now()
		answer := make(chan string)
		go func() {
			b, _ := io.ReadAll(c)
			answer <- string(b)
		}()
		// One byte a second, each well within any per-read timeout, for
		// at most a minute.
		if _, err := io.WriteString(c, "GET http://a.example/ HTTP/1.1\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		for range 60 {
			time.Sleep(time.Second)
			if _, err := io.WriteString(c, "a"); err != nil {
				break
			}
		}
		got := <-answer
		elapsed := time.Since(begin)
		if !strings.HasPrefix(got, "HTTP/1.1 408 ") {
			t.Errorf("answer %q, want 408", got)
		}
		if elapsed < 10*time.Second || elapsed > 11*time.Second {
			t.Errorf("a trickling client was cut off after %v, want the 10s header timeout", elapsed)
		}
	})
}

func TestCloseEndsTunnelsInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		var upstreams sync.WaitGroup
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			proxySide, upSide := net.Pipe()
			upstreams.Add(1)
			go func() { // an upstream that echoes until its connection ends
				defer upstreams.Done()
				io.Copy(upSide, upSide)
				upSide.Close()
			}()
			return proxySide, nil
		}
		p, err := start(Config{Allow: allowOnly("a.example"), Dial: dial}, ln)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close() // on a failure below; Close is idempotent
		var clients []net.Conn
		for i := range 3 {
			c := ln.dial()
			clients = append(clients, c)
			fmt.Fprintf(c, "CONNECT A.Example.:443 HTTP/1.1\r\n\r\n")
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("CONNECT: %v %v", resp, err)
			}
			msg := fmt.Sprintf("ping %d", i)
			go io.WriteString(c, msg)
			buf := make([]byte, len(msg))
			if _, err := io.ReadFull(br, buf); err != nil || string(buf) != msg {
				t.Fatalf("tunnel echoed %q, %v", buf, err)
			}
		}
		idle := ln.dial() // a client that never sends a byte
		synctest.Wait()
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, c := range append(clients, idle) {
			if _, err := c.Read(make([]byte, 1)); err == nil {
				t.Error("a client connection is still open after Close")
			}
			c.Close()
		}
		upstreams.Wait()
		// synctest.Test itself fails if any goroutine of the proxy is left.
	})
}
