package netproxy

import (
	"context"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// hopHeaders are the hop-by-hop headers of RFC 9110 §7.6.1 and the
// proxy-specific ones; they are never forwarded.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// removeHopHeaders deletes the hop-by-hop headers from h, including the
// ones the Connection header lists.
func removeHopHeaders(h http.Header) {
	for _, v := range h["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// forward serves a request with an absolute http:// URI: check, send it
// upstream, copy the response back, then close.
func (p *Proxy) forward(c net.Conn, req *http.Request) {
	u := req.URL
	switch {
	case u == nil || !u.IsAbs() || u.Host == "":
		p.refuse(c, http.StatusBadRequest, "this is a proxy: send an absolute http:// URI, or CONNECT host:port\n")
		return
	case !strings.EqualFold(u.Scheme, "http"):
		p.refuse(c, http.StatusBadRequest, "only http:// URIs are forwarded; use CONNECT for "+u.Scheme+"\n")
		return
	}
	rawPort := u.Port()
	if rawPort == "" {
		rawPort = "80"
	}
	host, _, ok := p.target(c, u.Hostname(), rawPort)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	out := req.Clone(ctx)
	out.RequestURI = ""
	out.Close = false
	out.URL.Scheme = "http"
	// The canonical host is the one judged, so it is the one dialled.
	out.URL.Host = host
	switch {
	case u.Port() != "":
		out.URL.Host = net.JoinHostPort(host, u.Port())
	case strings.Contains(host, ":"):
		out.URL.Host = "[" + host + "]"
	}
	out.Host = out.URL.Host
	removeHopHeaders(out.Header)
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		if p.ctx.Err() == nil {
			p.refuse(c, http.StatusBadGateway, "could not reach "+host+"\n")
		}
		return
	}
	defer resp.Body.Close()
	removeHopHeaders(resp.Header)
	resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.1", 1, 1
	resp.Close = true
	resp.Write(&deadlineWriter{c: c, idle: p.cfg.IdleTimeout})
}

// deadlineWriter gives each write to a client a fresh deadline, so that a
// client that stops reading is dropped.
type deadlineWriter struct {
	c    net.Conn
	idle time.Duration
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.c.SetWriteDeadline(time.Now().Add(w.idle))
	return w.c.Write(b)
}
