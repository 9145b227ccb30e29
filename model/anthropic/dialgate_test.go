package anthropic

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// gateServer is a TLS test server whose handler holds every request until
// want requests are in handlers at once, counting the connections it
// accepts.
type gateServer struct {
	*httptest.Server
	conns   atomic.Int64
	arrived atomic.Int64
	all     chan struct{}
}

func newGateServer(t *testing.T, h2 bool, streams uint32, want int64) *gateServer {
	t.Helper()
	g := &gateServer{all: make(chan struct{})}
	g.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.arrived.Add(1) == want {
			close(g.all)
		}
		select {
		case <-g.all:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	g.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			g.conns.Add(1)
		}
	}
	g.EnableHTTP2 = h2
	if h2 {
		g.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: int(streams)}
	}
	g.StartTLS()
	t.Cleanup(g.Close)
	return g
}

// gateClient is an apiClient of tr (the provider's own transport, or one
// set up like it), trusting srv's certificate.
func gateClient(t *testing.T, srv *httptest.Server, tr *http.Transport) *apiClient {
	t.Helper()
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c, err := newAPIClient(&http.Client{Transport: tr}, srv.URL, http.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// postAll sends n requests at once and returns their errors.
func postAll(ctx context.Context, c *apiClient, n int) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := `{"n":1}`
			res, err := c.post(ctx, "v1/messages", "", strings.NewReader(body), int64(len(body)), nil, nil)
			if err == nil {
				res.Body.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return errs
}

// postShared sends n requests at once through c to srv, which holds them
// until all have come, and fails unless every one succeeds on at most
// the connections srv's stream limit needs, and a few more for streams
// the server refused before the client learnt its limit (the client
// starts out assuming 100).
func postShared(t *testing.T, c *apiClient, srv *gateServer, n, streams int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, err := range postAll(ctx, c, n) {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if got, most := srv.conns.Load(), int64(n/streams+4); got > most {
		t.Errorf("the server accepted %d connections for %d requests at %d streams each, want at most %d", got, n, streams, most)
	}
}

// TestDialGateSharesDials: requests started together against an HTTP/2
// host over TLS share dials, so the host sees about as many connections
// as its stream limit needs, not one per request. Without the gate each
// request that finds no connection ready dials one.
func TestDialGateSharesDials(t *testing.T) {
	const n, streams = 60, 10
	srv := newGateServer(t, true, streams, n)
	postShared(t, gateClient(t, srv.Server, NewTransport()), srv, n, streams)
}

// TestDialGateTunedTwice: a transport tuned twice (its dialer wrapped
// twice) shares dials as one tuned once, and no request waits on the
// inner gate, which the outer one's handshakes would never open.
func TestDialGateTunedTwice(t *testing.T) {
	const n, streams = 40, 10
	srv := newGateServer(t, true, streams, n)
	tr := NewTransport()
	TuneTransport(tr)
	c := gateClient(t, srv.Server, tr)
	postShared(t, c, srv, n, streams)
	// The next requests (the handler no longer holds them) must not
	// wait for a gate either.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, err := range postAll(ctx, c, 5) {
		if err != nil {
			t.Fatalf("later request %d: %v", i, err)
		}
	}
}

// TestDialGateLeavesHTTP1Alone: a host that answers TLS with HTTP/1.1
// gets a connection per request at once, as without the gate: every
// request must reach the handler before any is answered.
func TestDialGateLeavesHTTP1Alone(t *testing.T) {
	const n = 30
	srv := newGateServer(t, false, 0, n)
	c := gateClient(t, srv.Server, NewTransport())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, err := range postAll(ctx, c, n) {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if got := srv.conns.Load(); got < n {
		t.Errorf("the server accepted %d connections for %d requests held at once", got, n)
	}
}

// TestDialGateFailingHost: when the host's handshakes fail, every request
// fails with the handshake's error (none with errDialNotNeeded), and none
// waits for the others' dials.
func TestDialGateFailingHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conn.Close()
		}
	}()
	tr := NewTransport()
	c, err := newAPIClient(&http.Client{Transport: tr}, "https://"+ln.Addr().String(), http.Header{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 20
	for i, err := range postAll(ctx, c, n) {
		switch {
		case err == nil:
			t.Errorf("request %d: no error from a host that closes every connection", i)
		case errors.Is(err, errDialNotNeeded):
			t.Errorf("request %d: %v", i, err)
		case ctx.Err() != nil:
			t.Fatalf("request %d: still waiting at the deadline: %v", i, err)
		}
	}
	if accepted.Load() < n {
		t.Errorf("%d connections for %d requests: the requests did not each dial", accepted.Load(), n)
	}
}

// newWant is a dialWant for a request to addr, outside any transport.
func newWant(ctx context.Context, addr string) *dialWant {
	_, w := withDialWant(ctx, &url.URL{Scheme: "https", Host: addr})
	return w
}

// enterAsync runs h.enter for w in a goroutine; the channel receives its
// outcome.
type enterResult struct {
	t   *gateTicket
	err error
}

func enterAsync(h *gateHost, w *dialWant) <-chan enterResult {
	ch := make(chan enterResult, 1)
	go func() {
		t, err := h.enter(context.Background(), w)
		ch <- enterResult{t, err}
	}()
	return ch
}

// TestGateEnter walks the gate's states with dials that make no
// connection.
func TestGateEnter(t *testing.T) {
	ctx := context.Background()
	t.Run("one dial at a time, the waiting one not needed after HTTP/2", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := &gateHost{}
			w1, w2 := newWant(ctx, "a:443"), newWant(ctx, "a:443")
			t1, err := h.enter(ctx, w1)
			if t1 == nil || err != nil {
				t.Fatalf("first dial: ticket %v, error %v; want to hold the gate", t1, err)
			}
			second := enterAsync(h, w2)
			synctest.Wait()
			select {
			case r := <-second:
				t.Fatalf("second dial went ahead while the first held the gate: %+v", r)
			default:
			}
			h.handshakeDone(t1, "h2", nil)
			synctest.Wait()
			select {
			case r := <-second:
				t.Fatalf("second dial ended before its request got a connection: %+v", r)
			default:
			}
			w2.gotConn(httptrace.GotConnInfo{})
			r := <-second
			if !errors.Is(r.err, errDialNotNeeded) {
				t.Fatalf("second dial: %+v, want errDialNotNeeded", r)
			}
		})
	})
	t.Run("HTTP/1.1 opens the gate", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := &gateHost{}
			w1, w2, w3 := newWant(ctx, "a:443"), newWant(ctx, "a:443"), newWant(ctx, "a:443")
			t1, _ := h.enter(ctx, w1)
			second, third := enterAsync(h, w2), enterAsync(h, w3)
			synctest.Wait()
			h.handshakeDone(t1, "http/1.1", nil)
			for _, ch := range []<-chan enterResult{second, third} {
				if r := <-ch; r.t != nil || r.err != nil {
					t.Fatalf("dial after an HTTP/1.1 handshake: %+v, want to go ahead without the gate", r)
				}
			}
		})
	})
	t.Run("a failed dial opens the gate", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := &gateHost{}
			w1, w2 := newWant(ctx, "a:443"), newWant(ctx, "a:443")
			t1, _ := h.enter(ctx, w1)
			second := enterAsync(h, w2)
			synctest.Wait()
			t1.failed()
			if r := <-second; r.t != nil || r.err != nil {
				t.Fatalf("dial after a failed one: %+v, want to go ahead without the gate", r)
			}
			// A success closes it again.
			h.handshakeDone(nil, "h2", nil)
			w3 := newWant(ctx, "a:443")
			if t3, err := h.enter(ctx, w3); t3 == nil || err != nil {
				t.Fatalf("dial after an HTTP/2 handshake: %v, %v; want to hold the gate", t3, err)
			}
		})
	})
	t.Run("a closed connection after its handshake changes nothing", func(t *testing.T) {
		h := &gateHost{}
		w1 := newWant(ctx, "a:443")
		t1, _ := h.enter(ctx, w1)
		h.handshakeDone(t1, "h2", nil)
		w2 := newWant(ctx, "a:443")
		t2, _ := h.enter(ctx, w2)
		if t1.want != nil {
			t.Error("a released ticket keeps its request (and its context) for the connection's life")
		}
		t1.failed() // the first connection closes later
		if h.holder != t2 || h.mode != gateH2 {
			t.Fatalf("holder %p mode %d after an old connection closed; want %p, HTTP/2", h.holder, h.mode, t2)
		}
	})
	t.Run("a request served before its dial holds the gate", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := &gateHost{}
			w1, w2 := newWant(ctx, "a:443"), newWant(ctx, "a:443")
			t1, _ := h.enter(ctx, w1)
			second := enterAsync(h, w2)
			synctest.Wait()
			w2.done()
			if r := <-second; !errors.Is(r.err, errDialNotNeeded) {
				t.Fatalf("dial of a finished request: %+v, want errDialNotNeeded", r)
			}
			t1.failed()
		})
	})
	t.Run("no connection handed out: the dial goes ahead after the fallback", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := &gateHost{}
			w1, w2 := newWant(ctx, "a:443"), newWant(ctx, "a:443")
			t1, _ := h.enter(ctx, w1)
			second := enterAsync(h, w2)
			synctest.Wait()
			start := time.Now()
			h.handshakeDone(t1, "h2", nil)
			r := <-second
			if r.t == nil || r.err != nil {
				t.Fatalf("dial after the fallback: %+v, want to hold the gate", r)
			}
			if d := time.Since(start); d != gateFallback {
				t.Errorf("went ahead after %v, want %v", d, gateFallback)
			}
		})
	})
	t.Run("a gate never opened: the dial goes ahead after gateMaxWait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := &gateHost{}
			w1, w2 := newWant(ctx, "a:443"), newWant(ctx, "a:443")
			h.enter(ctx, w1) // never released
			start := time.Now()
			r := <-enterAsync(h, w2)
			if r.t != nil || r.err != nil {
				t.Fatalf("dial after the holder hung: %+v, want to go ahead without the gate", r)
			}
			if d := time.Since(start); d != gateMaxWait {
				t.Errorf("went ahead after %v, want %v", d, gateMaxWait)
			}
		})
	})
	t.Run("a cancelled request stops its waiting dial", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := &gateHost{}
			rctx, cancel := context.WithCancel(ctx)
			w1, w2 := newWant(ctx, "a:443"), newWant(rctx, "a:443")
			h.enter(ctx, w1)
			second := enterAsync(h, w2)
			synctest.Wait()
			cancel()
			if r := <-second; !errors.Is(r.err, context.Canceled) {
				t.Fatalf("dial of a cancelled request: %+v, want context.Canceled", r)
			}
		})
	})
}

// TestHTTPSAddr: the address a request's dials are matched against is
// the one net/http dials for its URL.
func TestHTTPSAddr(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://api.anthropic.com/v1", "api.anthropic.com:443"},
		{"https://API.Anthropic.com", "API.Anthropic.com:443"}, // net/http keeps an ASCII host's case
		{"https://example.com:8443/", "example.com:8443"},
		{"https://example.com:/", "example.com:443"},
		{"https://[::1]/", "[::1]:443"},
		{"https://[::1]:9443", "[::1]:9443"},
		{"https://127.0.0.1", "127.0.0.1:443"},
		{"https://bücher.example/", ""},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := httpsAddr(u); got != tc.want {
			t.Errorf("httpsAddr(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
