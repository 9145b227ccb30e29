package anthropic

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// The dial gate: over HTTP/2 one connection carries many requests, but
// net/http dials a connection for every request that finds none ready.
// When a thousand sessions start at once against an HTTPS host, every one
// of their first requests starts a TLS handshake before the first
// connection is up (a few hundred handshakes, about a millisecond of CPU
// each, for the four connections the host's stream limit needs); and each
// time the connections are full, every request over the limit dials
// again. The official HTTP/2 transport of golang.org/x/net shares one dial
// among the requests that wait; the one net/http bundles, which the
// provider uses (it falls back to HTTP/1.1), does not.
//
// The gate brings that sharing to the provider's transport without
// replacing it. Per host a request goes to over TLS without a proxy, at
// most one dial is under way while the host is not known to speak
// HTTP/1.1 only; the others wait for it. When it ends with an HTTP/2
// connection, net/http hands that connection to every request waiting
// for one, so a waiting dial whose request is served gives up
// (errDialNotNeeded, which net/http drops: the request it was for has its
// connection); a request the connection cannot take (its stream limit
// reached) asks again, and one new dial is made for all of them. A host
// that answers with HTTP/1.1, or whose last dial failed, is not gated:
// there a request needs a connection of its own, and a failing host must
// not make requests fail one after another.
//
// A dial knows what became of its request through the request's trace
// (net/http/httptrace), which net/http keeps in the dial's context: a
// request's GetConn starts each of its attempts at a connection, GotConn
// ends one, and the end of the request ends them all. A dial started by
// one attempt is not needed once any of those happens after it started.
// apiClient.post installs the trace (withDialWant) on requests to an
// https URL; the gate is in the dialer TuneTransport sets. A request sent
// through the transport by anything else has no trace of ours and dials
// as it would have.

// errDialNotNeeded is what a dial returns when the request it was made for
// got a connection meanwhile. net/http only delivers a dial's error to the
// request that asked for it, and that request has its connection, so this
// error reaches nobody.
var errDialNotNeeded = errors.New("anthropic: dial not needed: the request has a connection")

// gateFallback bounds how long a dial waits for its request to take the
// connection that came up while it waited, before it dials after all (a
// connection net/http could not hand out, because it broke at once).
const gateFallback = time.Second

// gateMaxWait bounds how long a dial waits for the gate, before it dials
// without it: longer than a dial and a TLS handshake take even to a slow
// host, so that it only comes into play if a holder were never to
// release the gate.
const gateMaxWait = 15 * time.Second

// dialWant is a request's context, with what its dials need to know: the
// host it goes to and a count of its attempts' events. It is the request's
// context itself (one allocation for both).
type dialWant struct {
	context.Context
	addr   string // host:port of the request's URL, as net/http dials it
	events atomic.Uint64
	trace  httptrace.ClientTrace

	held atomic.Pointer[gateTicket] // the gate a dial of the request holds
	set  atomic.Pointer[gateSet]    // the gates of the transport that dialed for it

	mu   sync.Mutex
	wake chan struct{} // closed at the next event; nil when no dial waits
}

// gateTicket is one dial's hold on its host's gate.
type gateTicket struct {
	host *gateHost
	want *dialWant // nil once released; guarded by host.mu
}

type dialWantKey struct{}

// Value implements [context.Context].
func (w *dialWant) Value(key any) any {
	if key == (dialWantKey{}) {
		return w
	}
	return w.Context.Value(key)
}

// withDialWant returns ctx with a dialWant for a request to u (scheme
// https) and the trace that feeds it, composed with any trace ctx already
// has. Call done once the request has its answer or has failed.
func withDialWant(ctx context.Context, u *url.URL) (context.Context, *dialWant) {
	w := &dialWant{Context: ctx, addr: httpsAddr(u)}
	w.trace.GetConn = w.getConn
	w.trace.GotConn = w.gotConn
	w.trace.TLSHandshakeDone = w.tlsDone
	return httptrace.WithClientTrace(w, &w.trace), w
}

// httpsAddr is the address net/http dials for u over TLS: its host and
// port, 443 when it names none. A host that is not ASCII (which net/http
// dials in its IDNA form) gives "", which no dial matches: such a
// request is not gated.
func httpsAddr(u *url.URL) string {
	host := u.Hostname()
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			return ""
		}
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(host, port)
}

func (w *dialWant) getConn(string)                { w.event() }
func (w *dialWant) gotConn(httptrace.GotConnInfo) { w.event() }
func (w *dialWant) done()                         { w.event() }

func (w *dialWant) tlsDone(cs tls.ConnectionState, err error) {
	if t := w.held.Swap(nil); t != nil {
		t.host.handshakeDone(t, cs.NegotiatedProtocol, err)
		return
	}
	// A dial that went ahead without the gate: what it learnt of the
	// host still counts.
	if set := w.set.Load(); set != nil {
		if h := set.lookup(w.addr); h != nil {
			h.handshakeDone(nil, cs.NegotiatedProtocol, err)
		}
	}
}

// event records that the request's current attempt at a connection has
// ended, waking its waiting dials.
func (w *dialWant) event() {
	w.events.Add(1)
	w.mu.Lock()
	if w.wake != nil {
		close(w.wake)
		w.wake = nil
	}
	w.mu.Unlock()
}

// wakeAfter returns a channel closed at the request's next event, or
// stale when an event happened since mark.
func (w *dialWant) wakeAfter(mark uint64) (wake <-chan struct{}, stale bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.events.Load() != mark {
		return nil, true
	}
	if w.wake == nil {
		w.wake = make(chan struct{})
	}
	return w.wake, false
}

// What a gate knows of a host's protocol.
type gateMode uint8

const (
	gateUnknown gateMode = iota // no dial has finished: gated
	gateH2                      // its last handshake chose HTTP/2: gated
	gateH1                      // its last handshake chose HTTP/1.1: open
	gateFailing                 // its last dial failed: open
)

// gateHost is the dial gate of one host.
type gateHost struct {
	mu     sync.Mutex
	mode   gateMode
	holder *gateTicket   // the dial under way; nil when none
	free   chan struct{} // closed when the holder's dial ends
	gen    uint64        // HTTP/2 connections made through the gate
}

// gateSet holds the gates of the hosts a transport dials, at most
// maxShared of them: when full, the gates of hosts no dial holds are
// forgotten (they only knew the hosts' protocols), and a host past that
// is not gated. Each transport has its own (made by dialBodyConns, shared
// by its clones): what one transport learns of a host (the protocol it
// negotiates depends on the transport's TLS settings) says nothing of
// another's.
type gateSet struct {
	mu sync.Mutex
	m  map[string]*gateHost
}

func (s *gateSet) lookup(addr string) *gateHost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[addr]
}

func (s *gateSet) host(addr string) *gateHost {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.m[addr]; ok {
		return h
	}
	if len(s.m) >= maxShared {
		for k, h := range s.m {
			h.mu.Lock()
			idle := h.holder == nil
			h.mu.Unlock()
			if idle {
				delete(s.m, k)
			}
		}
		if len(s.m) >= maxShared {
			return nil
		}
	}
	if s.m == nil {
		s.m = map[string]*gateHost{}
	}
	h := &gateHost{}
	s.m[addr] = h
	return h
}

// enter is called by a dial for w's request before it connects. It
// returns a ticket when the dial holds the host's gate (w's trace
// releases it at the end of the TLS handshake; failed releases it if
// the connection is not made or closes before), none when the dial may
// go ahead without it, or an error when the dial is not to be made:
// errDialNotNeeded, or the context's error.
func (h *gateHost) enter(ctx context.Context, w *dialWant) (*gateTicket, error) {
	var limit *time.Timer // made at the first wait
	mark := w.events.Load()
	h.mu.Lock()
	gen := h.gen
	for {
		switch {
		case h.mode == gateH1 || h.mode == gateFailing:
			h.mu.Unlock()
			return nil, nil
		case h.gen != gen:
			// A connection came up while this dial waited, after its
			// request asked for one: net/http hands it that connection.
			h.mu.Unlock()
			if err := w.awaitEvent(ctx, mark); err != nil {
				return nil, err
			}
			// No event: the connection was not handed out. Wait for
			// the gate as a new dial.
			mark = w.events.Load()
			h.mu.Lock()
			gen = h.gen
			continue
		case h.holder == nil:
			if w.events.Load() != mark {
				h.mu.Unlock()
				return nil, errDialNotNeeded
			}
			t := &gateTicket{host: h, want: w}
			h.holder = t
			h.free = make(chan struct{})
			w.held.Store(t)
			h.mu.Unlock()
			return t, nil
		}
		free := h.free
		h.mu.Unlock()
		wake, stale := w.wakeAfter(mark)
		if stale {
			return nil, errDialNotNeeded
		}
		if limit == nil {
			limit = time.NewTimer(gateMaxWait)
			defer limit.Stop()
		}
		select {
		case <-free:
		case <-wake:
			return nil, errDialNotNeeded
		case <-w.Done():
			return nil, context.Cause(w.Context)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-limit.C:
			return nil, nil // the dial under way is stuck: dial without the gate
		}
		h.mu.Lock()
	}
}

// awaitEvent waits for w's next event after mark: nil error and no event
// when none comes within gateFallback.
func (w *dialWant) awaitEvent(ctx context.Context, mark uint64) error {
	wake, stale := w.wakeAfter(mark)
	if stale {
		return errDialNotNeeded
	}
	t := time.NewTimer(gateFallback)
	defer t.Stop()
	select {
	case <-wake:
		return errDialNotNeeded
	case <-w.Done():
		return context.Cause(w.Context)
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// handshakeDone records the end of a TLS handshake with the host: the
// protocol chosen, or the error. It opens the gate if t (nil when the
// dial held none) holds it.
func (h *gateHost) handshakeDone(t *gateTicket, proto string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil:
		h.mode = gateFailing
	case proto == "h2":
		// net/http hands the connection to every request waiting for
		// one; the dials those requests wait in learn it from gen.
		h.mode = gateH2
		h.gen++
	default:
		h.mode = gateH1
	}
	h.releaseLocked(t)
}

// failed records that the dial holding t could not connect, or closed its
// connection before the end of its handshake, and opens the gate. It does
// nothing once t no longer holds the gate (a connection closed after its
// handshake).
func (t *gateTicket) failed() {
	h := t.host
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holder == t {
		h.mode = gateFailing
		h.releaseLocked(t)
	}
}

// releaseLocked opens the gate if t holds it. The ticket forgets its
// request: a connection keeps its ticket for as long as it lives, and
// must not keep the request's context with it.
func (h *gateHost) releaseLocked(t *gateTicket) {
	if t == nil || h.holder != t {
		return
	}
	t.want.held.CompareAndSwap(t, nil)
	t.want = nil
	h.holder = nil
	close(h.free)
	h.free = nil
}

// dial is the start of a gated transport's dialer: it returns the ticket
// of the gate the dial holds (nil when none), or the error that ends the
// dial.
func (s *gateSet) dial(ctx context.Context, addr string) (*gateTicket, error) {
	w, _ := ctx.Value(dialWantKey{}).(*dialWant)
	if w == nil || w.addr != addr {
		// Not a request of ours, or a dial to a proxy.
		return nil, nil
	}
	if !w.set.CompareAndSwap(nil, s) && w.set.Load() != s {
		// The request's dials pass another transport's gates: a
		// transport tuned twice, whose outer dialer gated this dial
		// already.
		return nil, nil
	}
	h := s.host(addr)
	if h == nil {
		return nil, nil
	}
	return h.enter(ctx, w)
}
