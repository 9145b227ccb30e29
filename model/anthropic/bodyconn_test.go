package anthropic

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
)

// writeRecorder is a connection that records what is written to it, and
// the first byte of each write.
type writeRecorder struct {
	net.Conn
	buf    bytes.Buffer
	firsts []*byte
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.firsts = append(w.firsts, &p[0])
	}
	return w.buf.Write(p)
}

// within reports whether p points into one of segs.
func within(p *byte, segs [][]byte) bool {
	for _, s := range segs {
		for i := range s {
			if &s[i] == p {
				return true
			}
		}
	}
	return false
}

// TestBodyConnWritesSegments shows that a body handed to a bodyConn as
// net/http hands it (a LimitedReader of its length, part of it perhaps
// read already) is written whole, from the segments themselves (no copy
// in between; one writev on a TCP connection), and leaves the reader at
// its end; other readers are copied as they are.
func TestBodyConnWritesSegments(t *testing.T) {
	b := body{segs: [][]byte{[]byte(`{"a":`), []byte(`"shared history"`), []byte(`,"b":`), []byte(`[1,2,3]}`)}}
	for _, s := range b.segs {
		b.n += len(s)
	}
	want := string(b.bytes())
	for pre := range b.n {
		r := b.reader()
		head := make([]byte, pre)
		if _, err := io.ReadFull(r, head); err != nil {
			t.Fatal(err)
		}
		rec := &writeRecorder{}
		c := &bodyConn{Conn: rec}
		lr := &io.LimitedReader{R: r, N: int64(b.n - pre)}
		n, err := c.ReadFrom(lr)
		if err != nil || n != int64(b.n-pre) || lr.N != 0 || r.left() != 0 {
			t.Fatalf("after %d bytes: n %d, err %v, limit left %d, reader left %d", pre, n, err, lr.N, r.left())
		}
		if got := string(head) + rec.buf.String(); got != want {
			t.Fatalf("after %d bytes: %s", pre, cmp.Diff(want, got))
		}
		for _, p := range rec.firsts {
			if !within(p, b.segs) {
				t.Fatalf("after %d bytes: a write from a copy, not from the body's segments", pre)
			}
		}
	}
	rec := &writeRecorder{}
	if _, err := (&bodyConn{Conn: rec}).ReadFrom(strings.NewReader("plain")); err != nil || rec.buf.String() != "plain" {
		t.Fatalf("plain reader: %q, %v", rec.buf.String(), err)
	}
}

// TestTunedTransportSendsBodies sends the requests of a growing session
// over HTTP/1.1 through a transport set up by TuneTransport and checks
// that the server receives each body as json.Marshal writes it.
func TestTunedTransportSendsBodies(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, streamBody())
	}))
	defer srv.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Each write to the connection is recorded: a request's head must
	// not go out on its own.
	var writes []string
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &tapConn{TCPConn: c.(*net.TCPConn), mu: &mu, writes: &writes}, nil
	}
	TuneTransport(tr)
	p, err := New(&Options{APIKey: "sk-test", BaseURL: srv.URL, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	s := &memoSession{cc: &model.CacheControl{Type: "ephemeral"}}
	s.history = []model.Message{{Role: "user", Content: []model.Content{model.TextBlock(strings.Repeat("Fix the bug. ", 3000))}}}
	var want []string
	for k := range 5 {
		s.turn(k)
		req := s.request()
		req.Tools = builtinToolDefs(t)
		want = append(want, marshalBody(t, req))
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("bodies (-json.Marshal +received):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, w := range writes {
		if strings.HasPrefix(w, "POST ") {
			t.Errorf("a request head was written on its own: %.60q", w)
		}
	}
}

// tapConn records the bytes of each plain write to its connection; a
// vectored write (net.Buffers, one writev) goes to the TCP connection
// unrecorded, as it embeds the connection.
type tapConn struct {
	*net.TCPConn
	mu     *sync.Mutex
	writes *[]string
}

func (c *tapConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	*c.writes = append(*c.writes, string(p))
	c.mu.Unlock()
	return c.TCPConn.Write(p)
}

// TestBodyConnHoldsHead shows that a request head after which a body
// comes is kept back and written with the body, first, and that a head
// of any other kind, or anything else written after a head kept back,
// goes out in order.
func TestBodyConnHoldsHead(t *testing.T) {
	post := "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 23\r\nContent-Type: application/json\r\n\r\n"
	cases := []struct {
		head string
		held bool
	}{
		{post, true},
		{"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", false},
		{"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", false},
		{"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 23\r\nExpect: 100-continue\r\n\r\n", false},
		{"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 23\r\n", false}, // not the whole head
		{"POST " + strings.Repeat("x", maxHeadBuf) + "\r\nContent-Length: 5\r\n\r\n", false},
	}
	for _, tc := range cases {
		if got := bodyFollows([]byte(tc.head)); got != tc.held {
			t.Errorf("bodyFollows(%.40q) = %v, want %v", tc.head, got, tc.held)
		}
	}

	b := body{segs: [][]byte{[]byte(`{"a":`), []byte(`"shared history"`), []byte(`}`)}}
	for _, s := range b.segs {
		b.n += len(s)
	}
	rec := &writeRecorder{}
	c := &bodyConn{Conn: rec}
	head := []byte(post)
	if n, err := c.Write(head); n != len(head) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	copy(head, "XXXX") // net/http reuses its buffer once Write returns
	if len(rec.firsts) != 0 {
		t.Fatal("the head was written on its own")
	}
	lr := &io.LimitedReader{R: b.reader(), N: int64(b.n)}
	n, err := c.ReadFrom(lr)
	if err != nil || n != int64(b.n) || lr.N != 0 {
		t.Fatalf("ReadFrom = %d, %v; limit left %d", n, err, lr.N)
	}
	if want := post + string(b.bytes()); rec.buf.String() != want {
		t.Fatalf("written (-want +got):\n%s", cmp.Diff(want, rec.buf.String()))
	}
	if c.head != nil {
		t.Fatal("the head is still kept after its body")
	}

	// A head kept back goes out before whatever else comes.
	for _, next := range []func(c *bodyConn) error{
		func(c *bodyConn) error { _, err := c.Write([]byte("next")); return err },
		func(c *bodyConn) error { _, err := c.ReadFrom(strings.NewReader("next")); return err },
	} {
		rec := &writeRecorder{}
		c := &bodyConn{Conn: rec}
		if _, err := c.Write([]byte(post)); err != nil {
			t.Fatal(err)
		}
		if err := next(c); err != nil {
			t.Fatal(err)
		}
		if want := post + "next"; rec.buf.String() != want {
			t.Errorf("written %q, want %q", rec.buf.String(), want)
		}
	}
}
