package agentlooptest

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// MaxBodyBytes is the largest request body the server accepts, as the API
// does; larger bodies get a 413 request_too_large error.
const MaxBodyBytes = 32 << 20

// maxH2Window is the largest flow-control window HTTP/2 allows (RFC 9113,
// section 6.9.1).
const maxH2Window = 1<<31 - 1

// Server is a fake Anthropic Messages API listening on a loopback address.
//
// Create one with [NewServer] (or [Start], or [NewTB] in tests) and Close it
// when done. All methods are safe for concurrent use, also while requests are
// being served: a script may Push more replies from an Expect callback or
// another goroutine.
type Server struct {
	// URL is the base URL of the server, e.g. http://127.0.0.1:41234,
	// without a trailing slash. Give it to clients as their API base URL.
	URL string

	srv       *http.Server
	ctx       context.Context
	cancel    context.CancelFunc
	serveDone chan struct{}
	conns     sync.WaitGroup // open connections
	handlers  sync.WaitGroup // running handlers
	closeOnce sync.Once

	mu         sync.Mutex
	closed     bool
	queue      []Reply
	next       int
	routes     []*route
	router     func(*Request) (Reply, bool)
	exhausted  Reply
	requests   []*Request // POST /v1/messages
	all        []*Request // every request
	mismatches []error
	// lenient turns off ValidateHistory; allowExhausted and allowInvalid
	// are NewTB's opt-outs.
	lenient, allowExhausted, allowInvalid bool
	// discard: requests are counted, not kept (DiscardRequests).
	discard        bool
	count, msgReqs int
	// dec decodes request bodies, caching tools, system prompts and
	// messages.
	dec decoder
}

// route is a rule added by Server.Route.
type route struct {
	match   func(*Request) bool
	replies []Reply
	next    int
}

// NewServer starts a server on 127.0.0.1 (or [::1]) with replies as its main
// queue. It panics if it cannot listen; use [Start] to get an error instead.
func NewServer(replies ...Reply) *Server {
	s, err := Start(replies...)
	if err != nil {
		panic(err)
	}
	return s
}

// Start is like [NewServer] but returns an error if it cannot listen.
func Start(replies ...Reply) (*Server, error) {
	return StartWith(nil, replies...)
}

// StartWith is like [Start], with the server configured by opts; nil opts
// are the zero [ServerOptions], which is what Start does.
func StartWith(opts *ServerOptions, replies ...Reply) (*Server, error) {
	if opts == nil {
		opts = &ServerOptions{}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		var err6 error
		if ln, err6 = net.Listen("tcp6", "[::1]:0"); err6 != nil {
			return nil, fmt.Errorf("agentlooptest: listen on loopback: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		URL:       "http://" + ln.Addr().String(),
		ctx:       ctx,
		cancel:    cancel,
		serveDone: make(chan struct{}),
		queue:     slices.Clone(replies),
		exhausted: Text("(script exhausted)"),
	}
	s.dec.msgs.limit = opts.MessageCacheBytes
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState: func(_ net.Conn, st http.ConnState) {
			// StateNew is reported by the Serve goroutine, before Close
			// waits for it; StateClosed and StateHijacked are final.
			switch st {
			case http.StateNew:
				s.conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				s.conns.Done()
			}
		},
	}
	if opts.H2C {
		s.srv.Protocols = new(http.Protocols)
		s.srv.Protocols.SetHTTP1(true)
		s.srv.Protocols.SetUnencryptedHTTP2(true)
		// Flow control per stream only, as front ends such as nginx
		// and Apache httpd do: the connection's window is the largest
		// the protocol allows. Go's default of 1 MiB for the whole
		// connection made a client's concurrent requests wait for each
		// other's bodies to be read whenever this server fell behind,
		// each holding a buffer of its body's size meanwhile.
		s.srv.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerConnection: maxH2Window}
	}
	if opts.TLS != nil {
		s.URL = "https://" + ln.Addr().String()
		s.srv.TLSConfig = opts.TLS.Clone()
		s.srv.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerConnection: maxH2Window}
	}
	go func() {
		defer close(s.serveDone)
		if opts.TLS != nil {
			s.srv.ServeTLS(ln, "", "")
		} else {
			s.srv.Serve(ln)
		}
	}()
	return s, nil
}

// Close shuts the server down: it stops accepting connections, closes the
// open ones (ending any delay or stream in progress), and waits until every
// handler has returned. Close may be called more than once. Requests()
// and the other accessors keep working after Close.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.srv.Close()
		s.cancel()
		<-s.serveDone
		s.handlers.Wait()
		s.conns.Wait()
	})
}

// Push appends replies to the main queue.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Remaining returns the number of replies left in the main queue.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) - s.next
}

// Lenient turns off the rules of [ValidateHistory] and
// [ValidateToolReferences]: from now on a
// request with a history the real API would reject is answered from the
// script like any other. Use it to script a model for a client whose
// histories you do not control; tests of an agent loop should keep the
// rules on.
func (s *Server) Lenient() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lenient = true
}

func (s *Server) strict() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.lenient
}

// AllowInvalidHistory tells [NewTB] that the test sends histories the API
// rejects on purpose: they are still answered with the API's 400 and
// recorded in Mismatches, but do not fail the test.
func (s *Server) AllowInvalidHistory() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allowInvalid = true
}

// AllowExhausted tells [NewTB] that requests past the end of the script
// are expected: they get the exhausted reply without failing the test.
// [Server.SetExhausted] implies it.
func (s *Server) AllowExhausted() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allowExhausted = true
}

// SetExhausted sets the reply for a messages request that finds its queue
// empty. The default is the text "(script exhausted)" with stop reason
// end_turn.
func (s *Server) SetExhausted(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exhausted = r
	s.allowExhausted = true
}

// Route adds a rule with its own queue: a valid messages request for which
// match returns true (and no earlier rule matched) is answered with the next
// of replies, without consuming the main queue; once they are used up it
// gets the exhausted reply. Rules are checked in the order they were added,
// before the router. Use Route to script subagents or helper calls whose
// requests arrive concurrently with the main conversation.
//
// match is called without any lock held, possibly concurrently, with a
// request not yet recorded; it must not modify the request.
func (s *Server) Route(match func(*Request) bool, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes = append(s.routes, &route{match: match, replies: slices.Clone(replies)})
}

// SetRouter sets a function that may answer a valid messages request not
// claimed by a Route rule, without consuming the main queue: if it returns
// true, the request is answered with its Reply. nil removes the router.
//
// The router is called without any lock held, possibly concurrently, with a
// request not yet recorded; it must not modify the request.
func (s *Server) SetRouter(router func(*Request) (Reply, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.router = router
}

// Requests returns every POST /v1/messages request received so far, valid or
// not, in the order the server picked their replies. The slice is a copy.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// AllRequests returns every request received so far, of any method and
// path, in order. The slice is a copy.
func (s *Server) AllRequests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.all)
}

// LastRequest returns the last POST /v1/messages request, or nil if there
// was none.
func (s *Server) LastRequest() *Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return nil
	}
	return s.requests[len(s.requests)-1]
}

// Len returns the number of POST /v1/messages requests received so far.
func (s *Server) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Mismatches returns the failures of Expect callbacks, panics of Expect,
// Route and router callbacks, and requests whose history the real API
// rejects (each a *[HistoryError]), in the order they happened. An Expect
// failure names its request by its index in Requests() and its Kind, e.g.
// "request 2 (main): …". A panicking Route rule counts as not matching, a
// panicking router as declining.
func (s *Server) Mismatches() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.mismatches)
}

func (s *Server) addMismatch(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mismatches = append(s.mismatches, err)
}

// serveHTTP is the server's handler.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "api_error", "agentlooptest: server closed", randomID("req_fake_"), nil)
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	req := &Request{
		Method:    r.Method,
		Path:      r.URL.Path,
		RawQuery:  r.URL.RawQuery,
		Header:    r.Header.Clone(),
		RequestID: randomID("req_fake_"),
		At:        time.Now(),
	}
	path := strings.TrimRight(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodPost && path == "/v1/messages":
		s.messages(w, r, req)
	case r.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		s.countTokens(w, r, req)
	case r.Method == http.MethodGet && path == "/v1/models":
		req.Kind = KindOther
		req.Body, _ = readBody(w, r)
		s.record(req, false)
		w.Header().Set("request-id", req.RequestID)
		writeJSON(w, http.StatusOK, map[string]any{"data": []any{}, "has_more": false, "first_id": nil, "last_id": nil})
	default:
		req.Kind = KindOther
		req.Body, _ = readBody(w, r)
		s.record(req, false)
		writeError(w, http.StatusNotFound, "not_found_error",
			fmt.Sprintf("agentlooptest: unknown endpoint %s %s", r.Method, r.URL.Path), req.RequestID, nil)
	}
}

// record appends req to the log; messages requests also to Requests(). It
// returns req's index in Requests(), or -1. The caller must not hold s.mu;
// recordLocked is the same for a caller that does.
func (s *Server) record(req *Request, messages bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recordLocked(req, messages)
}

func (s *Server) recordLocked(req *Request, messages bool) int {
	s.count++
	if messages {
		s.msgReqs++
	}
	if s.discard {
		if !messages {
			return -1
		}
		return s.msgReqs - 1
	}
	s.all = append(s.all, req)
	if !messages {
		return -1
	}
	s.requests = append(s.requests, req)
	return len(s.requests) - 1
}

// DiscardRequests stops keeping the requests the server receives: from
// now on they are counted (see Served) but not added to Requests or
// AllRequests, so a long load test does not hold every request body in
// memory. Checks that need a request (mismatches, Expect) still run.
func (s *Server) DiscardRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.discard = true
}

// Served returns how many requests the server has received in all, and
// how many of them were messages requests, kept or not.
func (s *Server) Served() (all, messages int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count, s.msgReqs
}

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request, req *Request) {
	req.Kind = KindCountTokens
	body, err := readBody(w, r)
	req.Body = body
	if err != nil {
		s.record(req, false)
		st, typ := bodyErrorStatus(err)
		writeError(w, st, typ, err.Error(), req.RequestID, nil)
		return
	}
	req.Params, _ = s.dec.decode(body)
	req.Params.Betas = betas(r.Header)
	s.record(req, false)
	w.Header().Set("request-id", req.RequestID)
	writeJSON(w, http.StatusOK, map[string]int{"input_tokens": max(1, len(body)/4)})
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request, req *Request) {
	body, err := readBody(w, r)
	req.Body = body
	if err == nil {
		req.Params, err = s.dec.decode(body)
		if err == nil {
			err = validate(&req.Params)
		}
	}
	req.Params.Betas = betas(r.Header)
	if err != nil {
		st, typ := bodyErrorStatus(err)
		rep := Error(st, typ, err.Error()).resolve("")
		req.Kind = KindInvalid
		req.Reply = &rep
		s.record(req, true)
		s.answer(w, r, req)
		return
	}
	if s.strict() {
		herr := ValidateHistory(req.Params.Messages)
		if herr == nil {
			herr = ValidateToolReferences(&req.Params)
		}
		if herr != nil {
			rep := Error(http.StatusBadRequest, "invalid_request_error", herr.Error()).resolve("")
			req.Kind = KindInvalid
			req.Reply = &rep
			index := s.record(req, true)
			s.addMismatch(&HistoryError{Request: index, Message: herr.Error()})
			s.answer(w, r, req)
			return
		}
	}

	index := s.pick(req)
	if exp := req.Reply.Expect; exp != nil {
		if err := callExpect(exp, req); err != nil {
			s.addMismatch(fmt.Errorf("request %d (%s): %w", index, req.Kind, err))
		}
	}
	s.answer(w, r, req)
}

// pick chooses the reply for a valid messages request, sets req.Kind and
// req.Reply and records req. It returns req's index in Requests().
func (s *Server) pick(req *Request) int {
	s.mu.Lock()
	routes := slices.Clone(s.routes)
	router := s.router
	s.mu.Unlock()

	var chosen *route
	for _, rt := range routes {
		ok, err := callMatch(rt.match, req)
		if err != nil {
			s.addMismatch(fmt.Errorf("route rule: %w", err))
		}
		if ok {
			chosen = rt
			break
		}
	}
	var routed Reply
	haveRouted := false
	if chosen == nil && router != nil {
		var err error
		routed, haveRouted, err = callRouter(router, req)
		if err != nil {
			s.addMismatch(fmt.Errorf("router: %w", err))
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var rep Reply
	switch {
	case chosen != nil && chosen.next < len(chosen.replies):
		rep, req.Kind = chosen.replies[chosen.next], KindRouted
		chosen.next++
	case chosen != nil:
		rep, req.Kind = s.exhausted, KindExhausted
	case haveRouted:
		rep, req.Kind = routed, KindRouted
	case s.next < len(s.queue):
		rep, req.Kind = s.queue[s.next], KindMain
		s.next++
	default:
		rep, req.Kind = s.exhausted, KindExhausted
	}
	resolved := rep.resolve(req.Params.Model)
	req.Reply = &resolved
	return s.recordLocked(req, true)
}

// answer sends req.Reply.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, req *Request) {
	rep := req.Reply
	ctx := r.Context()
	if rep.Delay > 0 && !sleep(ctx, rep.Delay) {
		abort(w)
		return
	}
	h := w.Header()
	h.Set("request-id", req.RequestID)
	switch {
	case rep.Status != 0:
		writeError(w, rep.Status, rep.ErrorType, rep.ErrorMessage, req.RequestID, rep.Header)
	case rep.RawSSE != "":
		setStreamHeaders(h)
		setHeaders(h, rep.Header)
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, rep.RawSSE)
	case !req.Params.Stream && rep.StreamError != nil:
		se := rep.StreamError
		writeError(w, statusForErrorType(se.Type), se.Type, se.Message, req.RequestID, rep.Header)
	case !req.Params.Stream:
		body, err := encodeJSON(message(rep))
		if err != nil {
			writeError(w, http.StatusInternalServerError, "api_error",
				"agentlooptest: cannot encode the scripted reply: "+err.Error(), req.RequestID, nil)
			return
		}
		h.Set("Content-Type", "application/json")
		setHeaders(h, rep.Header)
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	default:
		evs, err := streamEvents(rep)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "api_error",
				"agentlooptest: cannot encode the scripted reply: "+err.Error(), req.RequestID, nil)
			return
		}
		setStreamHeaders(h)
		setHeaders(h, rep.Header)
		s.stream(ctx, w, rep, evs)
	}
}

// stream writes the events and cuts the connection after rep.CutAfter
// events, or falls silent after rep.StallAfter events until the request
// ends, if those are set. It flushes the first event at once (the API sends
// message_start before it has generated anything), then after each event
// that the next one follows after rep.EventDelay, and before a cut or a
// stall; events that follow without delay go out together, as a client
// reading a fast stream receives them.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, rep *Reply, evs []sseEvent) {
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	for i, ev := range evs {
		if i > 0 && rep.EventDelay > 0 && !sleep(ctx, rep.EventDelay) {
			abort(w)
			return
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		cut := rep.CutAfter > 0 && i+1 >= rep.CutAfter
		stall := rep.StallAfter > 0 && i+1 >= rep.StallAfter
		if i == 0 || rep.EventDelay > 0 || cut || stall || i == len(evs)-1 {
			if err := rc.Flush(); err != nil {
				return
			}
		}
		if cut {
			abort(w)
			return
		}
		if stall {
			<-ctx.Done()
			abort(w)
			return
		}
	}
}

// abort takes the connection from net/http and closes it, so that the
// response, if begun, never gets its proper end: the client sees the
// connection break. An HTTP/2 response cannot be hijacked; its stream is
// reset instead (net/http's documented way, panicking with
// http.ErrAbortHandler, which the server recovers), and the client sees
// the stream break while the connection's other streams go on.
func abort(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	switch {
	case err == nil:
		conn.Close()
	case errors.Is(err, http.ErrNotSupported):
		panic(http.ErrAbortHandler)
	}
}

func setStreamHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
}

func setHeaders(h http.Header, extra map[string]string) {
	for k, v := range extra {
		h.Set(k, v)
	}
}

// writeError answers an API error.
func writeError(w http.ResponseWriter, status int, typ, msg, requestID string, extra map[string]string) {
	h := w.Header()
	h.Set("request-id", requestID)
	h.Set("Content-Type", "application/json")
	setHeaders(h, extra)
	body, _ := encodeJSON(struct {
		Type      string    `json:"type"`
		Error     errorBody `json:"error"`
		RequestID string    `json:"request_id"`
	}{"error", errorBody{typ, msg}, requestID})
	w.WriteHeader(status)
	w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := encodeJSON(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// errUnsupportedEncoding reports a request body in an encoding the server
// cannot decode.
var errUnsupportedEncoding = errors.New("unsupported Content-Encoding")

// readBody reads the request body, at most MaxBodyBytes, and decompresses it
// if it is gzip or deflate encoded.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	// One allocation of the declared length (plus the room ReadFrom
	// wants free to read the end) instead of io.ReadAll's doublings; a
	// wrong length only costs growth, and MaxBytesReader still bounds
	// what is read.
	size := int64(bytes.MinRead)
	if n := r.ContentLength; n > 0 && n <= MaxBodyBytes {
		size += n
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	body := buf.Bytes()
	if err != nil {
		return body, err
	}
	var zr io.ReadCloser
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return body, nil
	case "gzip":
		zr, err = gzip.NewReader(bytes.NewReader(body))
	case "deflate":
		zr, err = zlib.NewReader(bytes.NewReader(body))
	default:
		return body, fmt.Errorf("%w %q", errUnsupportedEncoding, enc)
	}
	if err != nil {
		return body, fmt.Errorf("cannot decode the %s body: %w", r.Header.Get("Content-Encoding"), err)
	}
	defer zr.Close()
	plain, err := io.ReadAll(io.LimitReader(zr, MaxBodyBytes+1))
	if err != nil {
		return body, fmt.Errorf("cannot decode the %s body: %w", r.Header.Get("Content-Encoding"), err)
	}
	if len(plain) > MaxBodyBytes {
		return body, &http.MaxBytesError{Limit: MaxBodyBytes}
	}
	return plain, nil
}

// bodyErrorStatus maps an error reading or decoding a body to a status and
// an error type.
func bodyErrorStatus(err error) (int, string) {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge, "request_too_large"
	}
	return http.StatusBadRequest, "invalid_request_error"
}

// sleep waits for d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// callExpect calls an Expect callback, turning a panic into an error.
func callExpect(f func(*Request) error, req *Request) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("Expect panicked: %v", v)
		}
	}()
	return f(req)
}

func callMatch(f func(*Request) bool, req *Request) (ok bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			ok, err = false, fmt.Errorf("match panicked: %v", v)
		}
	}()
	return f(req), nil
}

func callRouter(f func(*Request) (Reply, bool), req *Request) (rep Reply, ok bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			rep, ok, err = Reply{}, false, fmt.Errorf("router panicked: %v", v)
		}
	}()
	rep, ok = f(req)
	return rep, ok, nil
}
