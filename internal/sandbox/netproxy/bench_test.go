package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
)

// BenchmarkConnectRoundTrip measures one tunnel's life: connect to the
// proxy, CONNECT, one byte each way through the tunnel, close.
func BenchmarkConnectRoundTrip(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	p := startProxy(b, Config{Allow: allowOnly("127.0.0.1")})
	target := ln.Addr().String()
	buf := make([]byte, 1)
	b.ResetTimer()
	for b.Loop() {
		c, err := net.Dial("tcp", p.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", target)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("CONNECT: %v %v", resp, err)
		}
		c.Write([]byte{'x'})
		if _, err := io.ReadFull(br, buf); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

// BenchmarkTunnelThroughput copies 64 MiB through one tunnel.
func BenchmarkTunnelThroughput(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(io.Discard, c)
				c.Write([]byte("done"))
			}()
		}
	}()
	p := startProxy(b, Config{Allow: allowOnly("127.0.0.1")})
	chunk := make([]byte, 1<<20)
	b.SetBytes(64 << 20)
	for b.Loop() {
		c, br := connect(b, p, ln.Addr().String())
		for range 64 {
			if _, err := c.Write(chunk); err != nil {
				b.Fatal(err)
			}
		}
		c.(*net.TCPConn).CloseWrite()
		if got, _ := io.ReadAll(br); string(got) != "done" {
			b.Fatalf("got %q", got)
		}
		c.Close()
	}
}

// BenchmarkDirectRoundTrip is the baseline for BenchmarkConnectRoundTrip:
// the same exchange without the proxy.
func BenchmarkDirectRoundTrip(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	buf := make([]byte, 1)
	for b.Loop() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		c.Write([]byte{'x'})
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
