package anthropic

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
)

// bodyConn is a connection of the provider's transport that writes a
// request body's segments straight from where they are kept, in one
// vectored write (writev), rather than through the copy net/http makes:
// over HTTP/1.1 it hands a body of known length to the connection wrapped
// in an [io.LimitedReader], which the connection's ReadFrom would read
// into a buffer allocated for each request (up to 32 KiB) and write from
// there. Anything else is written as it would have been.
//
// The request's head goes in the same write: net/http writes a request's
// head on its own (and flushes it) before a body it does not hold in
// memory, which over HTTP/1.1 on a plain connection is a system call of
// its own for every request. A head that says a body follows (a POST
// with a non-zero Content-Length, and no Expect: 100-continue, which
// waits for the server before the body) is kept back until the body's
// ReadFrom, and written with it; anything else written first sends it.
// Only net/http's connection goroutine writes to a connection, so the
// held head needs no lock.
type bodyConn struct {
	net.Conn
	head *[]byte // a request head kept back for its body; nil when none

	// gate is the hold on its host's dial gate of the dial that made the
	// connection; nil when it held none. Closing the connection before
	// the end of its TLS handshake opens the gate (see dialgate.go).
	gate *gateTicket
}

// Close implements [net.Conn].
func (c *bodyConn) Close() error {
	if c.gate != nil {
		c.gate.failed()
	}
	return c.Conn.Close()
}

// Write implements [io.Writer].
func (c *bodyConn) Write(p []byte) (int, error) {
	if c.head == nil && bodyFollows(p) {
		h := heads.Get().(*[]byte)
		*h = append((*h)[:0], p...)
		c.head = h
		return len(p), nil
	}
	if err := c.sendHead(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// sendHead writes a head kept back, if any.
func (c *bodyConn) sendHead() error {
	h := c.takeHead()
	if h == nil {
		return nil
	}
	defer putHead(h)
	_, err := c.Conn.Write(*h)
	return err
}

// takeHead returns the head kept back, if any, and forgets it.
func (c *bodyConn) takeHead() *[]byte {
	h := c.head
	c.head = nil
	return h
}

// heads holds the buffers request heads are kept in, each up to
// maxHeadBuf bytes.
var heads = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxHeadBuf = 16 << 10

func putHead(h *[]byte) {
	if cap(*h) <= maxHeadBuf {
		heads.Put(h)
	}
}

// bodyFollows reports whether p is a whole HTTP/1.1 request head, as
// net/http writes one, after which the body comes at once: a POST with a
// Content-Length that is not zero and no Expect header.
func bodyFollows(p []byte) bool {
	if !bytes.HasPrefix(p, []byte("POST ")) || !bytes.HasSuffix(p, []byte("\r\n\r\n")) || len(p) > maxHeadBuf {
		return false
	}
	if bytes.Contains(p, []byte("\r\nExpect:")) {
		return false
	}
	_, after, ok := bytes.Cut(p, []byte("\r\nContent-Length: "))
	return ok && len(after) > 0 && after[0] >= '1' && after[0] <= '9'
}

// ReadFrom implements [io.ReaderFrom].
func (c *bodyConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if br, ok := lr.R.(*bodyReader); ok && br.left() <= lr.N {
			h := c.takeHead()
			var head []byte
			if h != nil {
				head = *h
				defer putHead(h)
			}
			n, err := br.writeVectors(c.Conn, head)
			lr.N -= n
			return n, err
		}
	}
	if err := c.sendHead(); err != nil {
		return 0, err
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// writerOnly hides a writer's ReadFrom, so that io.Copy does not call
// back into bodyConn.
type writerOnly struct{ io.Writer }

// dialBodyConns wraps t's dialer so that its connections are bodyConns,
// and its dials to an HTTPS host pass its dial gates (dialgate.go).
func dialBodyConns(t *http.Transport) {
	dial := t.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	gates := new(gateSet) // the transport's dial gates (dialgate.go)
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		gate, err := gates.dial(ctx, addr)
		if err != nil {
			return nil, err
		}
		c, err := dial(ctx, network, addr)
		if err != nil {
			if gate != nil {
				gate.failed()
			}
			return nil, err
		}
		return &bodyConn{Conn: c, gate: gate}, nil
	}
}

// left returns how many bytes the reader has yet to read.
func (r *bodyReader) left() int64 {
	var n int64
	for i, s := range r.segs {
		if i == 0 {
			s = s[r.off:]
		}
		n += int64(len(s))
	}
	return n
}

// vectors holds the lists of segments writeVectors hands to writev,
// which consumes them: the body's own list is shared and stays as it is.
var vectors = sync.Pool{New: func() any { return new(net.Buffers) }}

// writeVectors writes head and then what is left of the body to w, in one
// vectored write where w supports it, and moves the reader on by what of
// the body was written, which it returns.
func (r *bodyReader) writeVectors(w io.Writer, head []byte) (int64, error) {
	v := vectors.Get().(*net.Buffers)
	if len(head) > 0 {
		*v = append(*v, head)
	}
	for i, s := range r.segs {
		if i == 0 {
			s = s[r.off:]
		}
		if len(s) > 0 {
			*v = append(*v, s)
		}
	}
	bufs := *v
	n, err := bufs.WriteTo(w) // consumes bufs, a copy of v's header
	if n -= int64(len(head)); n < 0 {
		n = 0
	}
	for k := n; k > 0; {
		c := min(k, int64(len(r.segs[0])-r.off))
		r.next(int(c))
		k -= c
	}
	clear(*v)
	*v = (*v)[:0]
	vectors.Put(v)
	return n, err
}
