package anthropic

import (
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
type bodyConn struct{ net.Conn }

// ReadFrom implements [io.ReaderFrom].
func (c *bodyConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if br, ok := lr.R.(*bodyReader); ok && br.left() <= lr.N {
			n, err := br.writeVectors(c.Conn)
			lr.N -= n
			return n, err
		}
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// writerOnly hides a writer's ReadFrom, so that io.Copy does not call
// back into bodyConn.
type writerOnly struct{ io.Writer }

// dialBodyConns wraps t's dialer so that its connections are bodyConns.
func dialBodyConns(t *http.Transport) {
	dial := t.DialContext
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &bodyConn{Conn: c}, nil
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

// writeVectors writes what is left of the body to w, in one vectored write
// where w supports it, and moves the reader on by what was written.
func (r *bodyReader) writeVectors(w io.Writer) (int64, error) {
	v := vectors.Get().(*net.Buffers)
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
