package netproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/agentloop/agentloop/internal/netaddr"
)

// bufSize is the read buffer of a client connection; the header limit
// allows for one buffer of read-ahead, as net/http does.
const bufSize = 4 << 10

// errorWriteTimeout bounds the writing of an error response to a client
// that does not read.
const errorWriteTimeout = 5 * time.Second

// clientReader reads a client connection: within a byte budget while the
// header is read, and with a fresh idle deadline before each read once
// idle is set.
type clientReader struct {
	c    net.Conn
	n    int64 // bytes left in the header budget; <0 means unlimited
	idle time.Duration
}

func (r *clientReader) Read(b []byte) (int, error) {
	if r.n == 0 {
		return 0, errHeaderTooLarge
	}
	if r.n > 0 && int64(len(b)) > r.n {
		b = b[:r.n]
	}
	if r.idle > 0 {
		r.c.SetReadDeadline(time.Now().Add(r.idle))
	}
	n, err := r.c.Read(b)
	if r.n > 0 {
		r.n -= int64(n)
	}
	return n, err
}

var errHeaderTooLarge = errors.New("request header too large")

// serve handles one client connection: one CONNECT, or one forwarded
// request.
func (p *Proxy) serve(c net.Conn) {
	cr := &clientReader{c: c, n: int64(p.cfg.MaxHeaderBytes) + bufSize}
	br := bufio.NewReaderSize(cr, bufSize)
	c.SetReadDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	req, err := http.ReadRequest(br)
	if err != nil {
		switch {
		case errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
			// Closed before a request began: nothing to say.
		case errors.Is(err, errHeaderTooLarge):
			p.refuse(c, http.StatusRequestHeaderFieldsTooLarge, "request header too large\n")
		case errors.Is(err, os.ErrDeadlineExceeded):
			p.refuse(c, http.StatusRequestTimeout, "request header not received in time\n")
		default:
			p.refuse(c, http.StatusBadRequest, "malformed request\n")
		}
		return
	}
	if req.ProtoMajor != 1 {
		p.refuse(c, http.StatusHTTPVersionNotSupported, "only HTTP/1.x proxy requests are served\n")
		return
	}
	cr.n = -1
	c.SetReadDeadline(time.Time{})
	if req.Method == http.MethodConnect {
		p.tunnel(c, br, req)
		return
	}
	cr.idle = p.cfg.IdleTimeout
	p.forward(c, req)
}

// target checks a request's destination: it returns the canonical host
// and port, or writes the refusal and reports false.
func (p *Proxy) target(c net.Conn, rawHost, rawPort string) (string, int, bool) {
	port, err := strconv.Atoi(rawPort)
	if err != nil || port < 1 || port > 65535 || rawPort[0] == '+' {
		p.refuse(c, http.StatusBadRequest, "bad port in proxy request\n")
		return "", 0, false
	}
	host, err := netaddr.Canonical(rawHost)
	if err != nil {
		p.refuse(c, http.StatusBadRequest, "bad host in proxy request\n")
		return "", 0, false
	}
	if !p.cfg.Allow(host, port) {
		if p.cfg.Blocked != nil {
			p.cfg.Blocked(host, port)
		}
		p.refuse(c, http.StatusForbidden, fmt.Sprintf(
			"agentloop sandbox: the connection to %s was blocked: the host is not among the allowed network domains\n",
			net.JoinHostPort(host, strconv.Itoa(port))))
		return "", 0, false
	}
	return host, port, true
}

// refuse writes a short plain-text response that closes the connection.
func (p *Proxy) refuse(c net.Conn, status int, body string) {
	c.SetWriteDeadline(time.Now().Add(errorWriteTimeout))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}
