package anthropic

import (
	"io"
	"slices"
)

// body is a request body as a list of segments, sent one after the other.
// Segments are read, never written: some are the request's own (the
// framing, short messages, the last message), the others belong to the
// encoder's caches (a history message's JSON, the system prompt's, the
// tools') and are shared by every request that sends the same value. So a
// body costs its own bytes and a slice header per shared segment, not a
// copy of the tools and the system prompt.
type body struct {
	segs [][]byte // each clipped, so that no append can write into what follows it
	n    int      // total length
}

// bytes returns the body joined in one new slice.
func (b body) bytes() []byte {
	out := make([]byte, 0, b.n)
	for _, s := range b.segs {
		out = append(out, s...)
	}
	return out
}

// reader returns a new reader of the body from its start.
func (b body) reader() *bodyReader { return &bodyReader{segs: b.segs} }

// bodyReader reads a body's segments in order. It never writes the
// list of segments, which other readers of the body share. Close does
// nothing, so the reader can be the request's Body as it is.
type bodyReader struct {
	segs [][]byte // what is left: segs[0][off:], then the others
	off  int
}

// Read implements [io.Reader].
func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.segs) > 0 {
		c := copy(p[n:], r.segs[0][r.off:])
		n += c
		r.next(c)
	}
	if n == 0 && len(r.segs) == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// next moves c bytes on in the first segment left.
func (r *bodyReader) next(c int) {
	if r.off += c; r.off == len(r.segs[0]) {
		r.segs, r.off = r.segs[1:], 0
	}
}

// WriteTo implements [io.WriterTo]: it writes the segments left to w
// without copying them first.
func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for len(r.segs) > 0 {
		seg := r.segs[0][r.off:]
		c, err := w.Write(seg)
		n += int64(c)
		r.next(c)
		if err != nil {
			return n, err
		}
		if c < len(seg) {
			return n, io.ErrShortWrite
		}
	}
	return n, nil
}

// Close implements [io.Closer]; it does nothing.
func (r *bodyReader) Close() error { return nil }

// bodyBuilder assembles a body: the request's own bytes are appended to
// buf, and each shared segment is recorded with the length buf had where
// it goes, so the two interleave in order.
type bodyBuilder struct {
	buf    []byte
	shared []sharedSeg
}

type sharedSeg struct {
	at  int // how many bytes of buf go before the segment
	seg []byte
}

// share records seg, which the body will share, not copy, as going after
// the first at bytes of buf. Successive calls must not decrease at.
func (bb *bodyBuilder) share(at int, seg []byte) {
	if len(seg) > 0 {
		bb.shared = append(bb.shared, sharedSeg{at: at, seg: seg[:len(seg):len(seg)]})
	}
}

// body returns the body: a copy of buf, cut around the shared segments.
// The builder can be reused once it returns.
func (bb *bodyBuilder) body() body {
	own := slices.Clip(slices.Clone(bb.buf))
	b := body{segs: make([][]byte, 0, 2*len(bb.shared)+1), n: len(own)}
	prev := 0
	for _, s := range bb.shared {
		if s.at > prev {
			b.segs = append(b.segs, own[prev:s.at:s.at])
			prev = s.at
		}
		b.segs = append(b.segs, s.seg)
		b.n += len(s.seg)
	}
	if prev < len(own) {
		b.segs = append(b.segs, own[prev:])
	}
	return b
}
