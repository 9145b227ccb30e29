package netproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// tunnel serves a CONNECT request: check, dial, answer 200, then copy
// bytes both ways until both directions have ended.
func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, req *http.Request) {
	if req.URL == nil || req.URL.Host == "" || req.URL.Path != "" || req.URL.Port() == "" {
		p.refuse(c, http.StatusBadRequest, "CONNECT needs host:port\n")
		return
	}
	host, port, ok := p.target(c, req.URL.Hostname(), req.URL.Port())
	if !ok {
		return
	}
	up, err := p.dialTracked(p.ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		p.refuse(c, http.StatusBadGateway, "could not connect to "+host+"\n")
		return
	}
	defer up.Close()
	c.SetWriteDeadline(time.Now().Add(errorWriteTimeout))
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	c.SetWriteDeadline(time.Time{})

	raw := up
	if t, ok := up.(*trackedConn); ok {
		raw = t.Conn // copy on the bare connection so that splice can work
	}
	done := make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(done)
		// Bytes the client sent right behind its request go first; the
		// rest is copied from the bare connection (splice on Linux).
		if n := br.Buffered(); n > 0 {
			early, _ := br.Peek(n)
			if _, err := raw.Write(early); err != nil {
				c.Close()
				up.Close()
				return
			}
		}
		pipe(raw, c, c, up)
	}()
	pipe(c, raw, up, c)
	<-done
}

// pipe copies src to dst. At a clean end of src it half-closes dst so the
// peer sees the end too, and the other direction goes on; on an error it
// closes both connections, which ends the other direction as well.
func pipe(dst io.Writer, src io.Reader, srcConn, dstConn net.Conn) {
	_, err := io.Copy(dst, src)
	if err == nil {
		if closeWrite(dstConn) == nil {
			return
		}
	}
	srcConn.Close()
	dstConn.Close()
}

func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}
