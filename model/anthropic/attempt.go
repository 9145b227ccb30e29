package anthropic

// Provider.Stream: one request to the Messages API, with its retries, and how its failures are classified.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/internal/httpretry"
	"github.com/agentloop/agentloop/model"
)

// Stream sends req and streams the reply, retrying transient failures as the
// package documentation describes. The body is req's JSON with Stream set to
// true; req itself is not modified. h may be nil. On success the Response
// carries the usage of failed attempts in FailedUsage; on failure Stream
// returns a nil Response and a [*model.APIError], an error wrapping
// ctx.Err() when ctx ended first, or a plain error when req is nil or cannot
// be encoded, and an error wrapping an [*APIKeyHelperError] or a
// [*PlatformAuthError] when there was no credential to send.
func (p *Provider) Stream(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	if req == nil {
		return nil, errors.New("anthropic: nil request")
	}
	if h == nil {
		h = model.NopHandler{}
	}
	body, err := p.encode(req)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encoding request: %w", err)
	}
	// The retry state is made at the first failure: the frame a turn
	// keeps while it waits for a reply stays small (see exchange).
	var (
		first time.Time // start of the first attempt
		rs    *retryState
	)
	for {
		if err := ctx.Err(); err != nil {
			return nil, canceled(err)
		}
		resp, f := p.attempt(ctx, body, req.Betas, h, &first)
		if f == nil {
			if rs != nil {
				resp.FailedUsage = rs.failed
			}
			resp.Duration = p.now().Sub(first)
			return resp, nil
		}
		if rs == nil {
			rs = &retryState{}
		}
		delay, err := p.afterFailure(ctx, f, rs, h)
		if err != nil {
			return nil, err
		}
		if err := p.sleep(ctx, delay); err != nil {
			return nil, canceled(err)
		}
	}
}

// retryState is what Stream counts across the failed attempts of one
// request.
type retryState struct {
	failed     model.Usage    // of the failed attempts that had any
	hopeless   map[string]int // failures counted against their own limit
	retries    int
	overloaded int
}

// afterFailure decides what follows the failed attempt f: the delay before
// the next attempt (announced to h when f says so), or the error Stream
// returns.
//
//go:noinline
func (p *Provider) afterFailure(ctx context.Context, f *failure, rs *retryState, h model.Handler) (time.Duration, error) {
	if f.fatal != nil {
		return 0, f.fatal
	}
	if f.usage != nil {
		rs.failed = rs.failed.Add(*f.usage)
	}
	if err := ctx.Err(); err != nil {
		return 0, canceled(err)
	}
	if f.overloaded {
		rs.overloaded++
	}
	giveUp := false
	if f.limit > 0 {
		if rs.hopeless == nil {
			rs.hopeless = map[string]int{}
		}
		rs.hopeless[f.limitKey]++
		giveUp = rs.hopeless[f.limitKey] >= f.limit
	}
	if !f.retry || giveUp || rs.retries >= p.maxRetries || rs.overloaded >= maxOverloaded {
		e := f.final(rs.retries, rs.overloaded >= maxOverloaded)
		e.Endpoint = p.endpoint
		return 0, e
	}
	rs.retries++
	delay := p.backoff(rs.retries, f.retryAfter)
	if f.announce {
		h.Retry(model.RetryInfo{
			Attempt:    rs.retries,
			MaxRetries: p.maxRetries,
			Delay:      delay,
			Status:     f.status,
			Kind:       f.kind,
			Err:        f.err,
		})
	}
	return delay, nil
}

func canceled(err error) error { return fmt.Errorf("anthropic: %w", err) }

// backoff returns the wait before retry number n (1 for the first).
func (p *Provider) backoff(n int, retryAfter time.Duration) time.Duration {
	return httpretry.Backoff(n, retryAfter, p.jitter())
}

// failure is one failed attempt: how to retry it and what to report if it is
// the last.
type failure struct {
	kind       string // RetryInfo.Kind
	status     int    // HTTP status, 0 when there was none
	retry      bool   // whether this kind of failure is retried at all
	limit      int    // when > 0: give up on the limit-th failure with this limitKey, retries left or not
	limitKey   string
	announce   bool // whether Handler.Retry hears about the retry
	overloaded bool // counts towards the 529 limit
	retryAfter time.Duration
	err        error          // the failure, for RetryInfo.Err
	apiErr     model.APIError // what to return when giving up
	usage      *model.Usage   // usage of a stream that failed after message_start
	// fatal, when set, is returned as it is, at once: a failure before
	// any request (an API key helper or cloud credentials that failed).
	fatal error
}

// final returns the error to report when giving up after retries retries.
func (f *failure) final(retries int, overloaded bool) *model.APIError {
	e := f.apiErr
	e.Retries = retries
	if overloaded && f.status == 529 {
		e.Type = "overloaded_error"
	}
	return &e
}

// attempt makes one request and reads its stream. It returns the reply, or a
// failure saying what went wrong. It sets *first to its start time if
// *first is zero. The provider's timeouts bound it (see [Options]).
func (p *Provider) attempt(ctx context.Context, body body, betas []string, h model.Handler, first *time.Time) (*model.Response, *failure) {
	start := p.now()
	if first.IsZero() {
		*first = start
	}
	actx, wd := startWatchdog(ctx, p.timeouts)
	resp, f := p.exchange(actx, start, body, betas, h, wd)
	if te := wd.stop(); f != nil && te != nil && ctx.Err() == nil {
		// The watchdog cut the attempt: whatever error the cut caused,
		// the timeout is the failure.
		tf := connFailure(te)
		tf.apiErr.RequestID, tf.usage = f.apiErr.RequestID, f.usage
		return nil, tf
	}
	return resp, f
}

// exchange sends the request with ctx and reads the reply, telling wd of
// every event. Sending and reading are two functions so that the frame a
// turn keeps while it waits for the reply's head holds none of the
// reading's state: most of a turn is spent parked there.
func (p *Provider) exchange(ctx context.Context, start time.Time, body body, betas []string, h model.Handler, wd *watchdog) (*model.Response, *failure) {
	res, f := p.send(ctx, body, betas)
	if f != nil {
		return nil, f
	}
	return p.readReply(res, start, h, wd)
}

// send posts the request and returns the reply's head, or the failure
// when there is no 2xx reply to read.
//
//go:noinline
func (p *Provider) send(ctx context.Context, body body, betas []string) (*http.Response, *failure) {
	query := ""
	if p.platform == PlatformAnthropic {
		query = "beta=true"
	}
	key, kf := p.helperKey(ctx)
	if kf != nil {
		return nil, kf
	}
	extra := p.extra.header(betas, key)
	// A fresh reader per attempt, and another for a redirect.
	getBody := func() (io.ReadCloser, error) { return body.reader(), nil }
	res, err := p.client.post(ctx, "v1/messages", query, body.reader(), int64(body.n), getBody, extra)
	if err != nil {
		var ae *statusError
		if errors.As(err, &ae) {
			if ae.StatusCode == http.StatusUnauthorized && key != "" {
				p.keys.refused(key) // the retry runs the helper again
			}
			return nil, statusFailure(ae)
		}
		if f := authFailure(err); f != nil {
			return nil, f
		}
		return nil, connFailure(err)
	}
	if res == nil || res.Body == nil {
		return nil, connFailure(errors.New("no response"))
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		res.Body.Close()
		f := connFailure(fmt.Errorf("unexpected HTTP status %d", res.StatusCode))
		f.apiErr.RequestID = res.Header.Get("request-id")
		return nil, f
	}
	return res, nil
}

// extraHeader returns the headers a messages request adds to the client's
// own: the betas and the API key helper's key, nil when there are none.
// It is a function of its own so that the map is made on the heap, not in
// the frame of send, which a turn keeps while it waits for the reply.
//
//go:noinline
func extraHeader(betas []string, key string) http.Header {
	if len(betas) == 0 && key == "" {
		return nil
	}
	h := make(http.Header, 2)
	if len(betas) > 0 {
		h.Set("anthropic-beta", strings.Join(betas, ","))
	}
	if key != "" {
		h.Set("X-Api-Key", key)
	}
	return h
}

// extraMemo keeps the last extra header made, for the next request with
// the same betas and key: a session sends the same ones turn after turn.
// The header it returns is shared and only read (apiClient.post copies its
// values into each request's own map).
type extraMemo struct{ last atomic.Pointer[memoExtra] }

type memoExtra struct {
	betas []string
	key   string
	h     http.Header
}

func (m *extraMemo) header(betas []string, key string) http.Header {
	if l := m.last.Load(); l != nil && l.key == key && slices.Equal(l.betas, betas) {
		return l.h
	}
	h := extraHeader(betas, key)
	m.last.Store(&memoExtra{betas: slices.Clone(betas), key: key, h: h})
	return h
}

// readReply reads the event stream of res, a 2xx reply to the attempt
// that began at start, and closes its body.
//
//go:noinline
func (p *Provider) readReply(res *http.Response, start time.Time, h model.Handler, wd *watchdog) (*model.Response, *failure) {
	defer res.Body.Close()
	requestID := res.Header.Get("request-id")
	s := newStreamState(h, func() time.Duration { return p.now().Sub(start) })
	s.onEvent = wd.event
	resp, err := s.read(res)
	if err != nil {
		f := streamFailure(err)
		f.apiErr.RequestID = requestID
		if s.started {
			u := cloneUsage(s.resp.Usage)
			f.usage = &u
		}
		return nil, f
	}
	resp.RequestID = requestID
	return resp, nil
}

// helperKey returns the API key helper's key for a request ("" without a
// helper), or the failure to report when the helper failed.
func (p *Provider) helperKey(ctx context.Context) (string, *failure) {
	if p.keys == nil {
		return "", nil
	}
	key, err := p.keys.get(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return "", connFailure(ctx.Err())
		}
		return "", &failure{fatal: fmt.Errorf("anthropic: %w", err)}
	}
	return key, nil
}

// authFailure describes a request that could not be authenticated (cloud
// credentials that cannot be had), or returns nil for other errors. It is
// not retried: the next attempt would find the same.
func authFailure(err error) *failure {
	var pe *PlatformAuthError
	if !errors.As(err, &pe) {
		return nil
	}
	return &failure{fatal: fmt.Errorf("anthropic: %w", pe)}
}

// statusFailure describes an HTTP error answer.
func statusFailure(ae *statusError) *failure {
	f := &failure{status: ae.StatusCode}
	switch {
	case ae.StatusCode == 529:
		f.kind, f.retry, f.overloaded = "overloaded", true, true
	case ae.StatusCode == http.StatusTooManyRequests:
		f.kind, f.retry = "rate_limit", true
	case ae.StatusCode == http.StatusUnauthorized:
		// A bad key stays bad: one retry (for a gateway's passing glitch),
		// not ten.
		f.kind, f.retry = "authentication_failed", true
		f.limit, f.limitKey = maxAuthFailures, "auth"
	case ae.StatusCode >= 500:
		f.kind, f.retry = "server_error", true
	}
	f.announce = f.retry
	msg := ae.Message
	if msg == "" {
		msg = strings.TrimSpace(string(ae.Raw))
		if len(msg) > 1000 {
			msg = msg[:1000] + "…"
		}
	}
	if msg == "" {
		msg = http.StatusText(ae.StatusCode)
	}
	f.apiErr = model.APIError{
		Status:    ae.StatusCode,
		Type:      ae.Type,
		Message:   msg,
		RequestID: ae.RequestID,
	}
	if ae.Response != nil {
		f.retryAfter = httpretry.After(ae.Response.Header)
		if f.apiErr.RequestID == "" {
			f.apiErr.RequestID = ae.Response.Header.Get("request-id")
		}
	}
	e := f.apiErr
	f.err = &e
	return f
}

// connFailure describes a request that got no answer.
func connFailure(err error) *failure {
	f := &failure{
		kind:     "connection_error",
		retry:    true,
		announce: true,
		err:      err,
		apiErr:   model.APIError{Err: err},
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		// No such host: the name will not resolve on the next try
		// either; the second failure ends the call.
		f.limit, f.limitKey = maxNoSuchHost, "dns"
	}
	return f
}

// streamFailure describes a stream that broke: an error event, or malformed.
func streamFailure(err error) *failure {
	var se *streamError
	if errors.As(err, &se) {
		return &failure{
			kind:       "stream_error",
			retry:      true,
			overloaded: se.Type == "overloaded_error",
			err:        err,
			apiErr:     model.APIError{Type: se.Type, Message: se.Message},
		}
	}
	return connFailure(err)
}

// encode returns the request body: req's JSON with stream set to true.
func (p *Provider) encode(req *model.Request) (body, error) { return p.enc.body(req) }
