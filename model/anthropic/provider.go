package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentloop/agentloop/model"
)

// Version is agentloop's version, sent in the User-Agent header as
// agentloop/Version. [New] reads it, so change it, if at all, before
// creating providers.
var Version = "0.1.0"

// ErrNoCredentials is returned by [New] when there is nothing to authenticate
// with: no Options.APIKey or Options.AuthToken, no credential header in
// Options.Headers, and neither environment variable set.
var ErrNoCredentials = errors.New("anthropic: no API credentials: set ANTHROPIC_API_KEY (sent as x-api-key) or ANTHROPIC_AUTH_TOKEN (sent as Authorization: Bearer)")

// Defaults.
const (
	// DefaultBaseURL is the API's address when neither Options.BaseURL nor
	// ANTHROPIC_BASE_URL is set.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultMaxRetries is how many times a failed request is retried when
	// Options.MaxRetries is nil.
	DefaultMaxRetries = 10
	// APIVersion is the anthropic-version header.
	APIVersion = "2023-06-01"
)

// maxOverloaded is how many 529 answers end the retries: the reference gives
// up on the third, whatever MaxRetries allows.
const maxOverloaded = 3

// Backoff bounds: retry n waits min(baseDelay × 2^(n−1), maxDelay) plus up to
// jitterFraction of that.
const (
	baseDelay      = 500 * time.Millisecond
	maxDelay       = 32 * time.Second
	jitterFraction = 0.25
)

// Options configures a [Provider]. The zero value is usable: every empty field
// takes its default, from the environment where one applies. A nil *Options
// is the zero value.
type Options struct {
	// APIKey is sent in the x-api-key header. Empty: ANTHROPIC_API_KEY,
	// unless AuthToken is set.
	APIKey string
	// AuthToken is sent as Authorization: Bearer. Empty:
	// ANTHROPIC_AUTH_TOKEN, unless APIKey is set.
	AuthToken string
	// BaseURL is the API's address, e.g. http://127.0.0.1:8080 for a local
	// fake. A path is kept: requests go to {BaseURL}/v1/messages. Empty:
	// ANTHROPIC_BASE_URL, else [DefaultBaseURL].
	BaseURL string
	// HTTPClient sends the requests. Nil: a client of its own, with no
	// overall timeout (replies stream for minutes) and a ten-minute limit on
	// waiting for response headers.
	HTTPClient *http.Client
	// Headers are added to every request, after the provider's own, so they
	// can replace them (User-Agent included). A credential header here
	// (x-api-key or Authorization) counts as credentials for [New].
	Headers map[string]string
	// MaxRetries is how many times a failed request is retried. Nil:
	// [DefaultMaxRetries]. Zero: no retry. It is also the MaxRetries reported
	// in [model.RetryInfo].
	MaxRetries *int

	// Sleep waits d before a retry, returning early with ctx.Err() when ctx
	// is done. Nil: a timer. Tests replace it to record delays without
	// waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the clock for TTFT and Duration. Nil: time.Now.
	Now func() time.Time
	// Jitter returns a number in [0, 1) that scales the random part of a
	// retry delay. Nil: math/rand/v2.Float64.
	Jitter func() float64
}

// Provider streams replies from the Messages API. It implements
// [model.Provider] and is safe for concurrent use. Create it with [New].
type Provider struct {
	client     sdk.Client
	maxRetries int
	sleep      func(context.Context, time.Duration) error
	now        func() time.Time
	jitter     func() float64
	endpoint   string // host[:port] of the base URL, for error messages
}

var _ model.Provider = (*Provider)(nil)

// New returns a Provider configured by opts, which may be nil. It fails with
// [ErrNoCredentials] when there are no credentials, and with an error naming
// the value when the base URL is not an http or https URL.
func New(opts *Options) (*Provider, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.APIKey == "" && o.AuthToken == "" {
		o.APIKey = os.Getenv("ANTHROPIC_API_KEY")
		o.AuthToken = os.Getenv("ANTHROPIC_AUTH_TOKEN")
	}
	if o.APIKey == "" && o.AuthToken == "" && !hasCredentialHeader(o.Headers) {
		return nil, ErrNoCredentials
	}
	if o.BaseURL == "" {
		o.BaseURL = os.Getenv("ANTHROPIC_BASE_URL")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("anthropic: base URL %q: want an http or https URL", o.BaseURL)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = defaultHTTPClient()
	}

	copts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(o.BaseURL),
		option.WithHTTPClient(o.HTTPClient),
		option.WithMaxRetries(0),
		option.WithHeader("User-Agent", "agentloop/"+Version),
		option.WithHeader("anthropic-version", APIVersion),
	}
	if o.APIKey != "" {
		copts = append(copts, option.WithHeader("X-Api-Key", o.APIKey))
	}
	if o.AuthToken != "" {
		copts = append(copts, option.WithAuthToken(o.AuthToken))
	}
	for k, v := range o.Headers {
		copts = append(copts, option.WithHeader(k, v))
	}

	p := &Provider{
		endpoint:   u.Host,
		client:     sdk.NewClient(copts...),
		maxRetries: DefaultMaxRetries,
		sleep:      o.Sleep,
		now:        o.Now,
		jitter:     o.Jitter,
	}
	if o.MaxRetries != nil {
		p.maxRetries = max(*o.MaxRetries, 0)
	}
	if p.sleep == nil {
		p.sleep = sleepContext
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.jitter == nil {
		p.jitter = rand.Float64
	}
	return p, nil
}

func hasCredentialHeader(h map[string]string) bool {
	for k, v := range h {
		if v != "" && (strings.EqualFold(k, "x-api-key") || strings.EqualFold(k, "authorization")) {
			return true
		}
	}
	return false
}

func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		return &http.Client{Transport: t}
	}
	return &http.Client{}
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Stream sends req and streams the reply, retrying transient failures as the
// package documentation describes. The body is req's JSON with Stream set to
// true; req itself is not modified. h may be nil. On success the Response
// carries the usage of failed attempts in FailedUsage; on failure Stream
// returns a nil Response and a [*model.APIError], an error wrapping
// ctx.Err() when ctx ended first, or a plain error when req is nil or cannot
// be encoded.
func (p *Provider) Stream(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	if req == nil {
		return nil, errors.New("anthropic: nil request")
	}
	if h == nil {
		h = model.NopHandler{}
	}
	r := *req
	r.Stream = true
	body, err := json.Marshal(&r)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encoding request: %w", err)
	}

	var failed model.Usage
	retries, overloaded := 0, 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, canceled(err)
		}
		resp, f := p.attempt(ctx, body, req.Betas, h)
		if f == nil {
			resp.FailedUsage = failed
			return resp, nil
		}
		if f.usage != nil {
			failed = failed.Add(*f.usage)
		}
		if err := ctx.Err(); err != nil {
			return nil, canceled(err)
		}
		if f.overloaded {
			overloaded++
		}
		if !f.retry || retries >= p.maxRetries || overloaded >= maxOverloaded {
			e := f.final(retries, overloaded >= maxOverloaded)
			e.Endpoint = p.endpoint
			return nil, e
		}
		retries++
		delay := p.backoff(retries, f.retryAfter)
		if f.announce {
			h.Retry(model.RetryInfo{
				Attempt:    retries,
				MaxRetries: p.maxRetries,
				Delay:      delay,
				Status:     f.status,
				Kind:       f.kind,
				Err:        f.err,
			})
		}
		if err := p.sleep(ctx, delay); err != nil {
			return nil, canceled(err)
		}
	}
}

func canceled(err error) error { return fmt.Errorf("anthropic: %w", err) }

// backoff returns the wait before retry number n (1 for the first).
func (p *Provider) backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	d := maxDelay
	if n <= 7 { // 500ms × 2^6 = 32s
		d = min(baseDelay<<(max(n, 1)-1), maxDelay)
	}
	j := p.jitter()
	if !(j >= 0 && j < 1) {
		j = 0
	}
	return d + time.Duration(j*jitterFraction*float64(d))
}

// failure is one failed attempt: how to retry it and what to report if it is
// the last.
type failure struct {
	kind       string // RetryInfo.Kind
	status     int    // HTTP status, 0 when there was none
	retry      bool   // whether this kind of failure is retried at all
	announce   bool   // whether Handler.Retry hears about the retry
	overloaded bool   // counts towards the 529 limit
	retryAfter time.Duration
	err        error          // the failure, for RetryInfo.Err
	apiErr     model.APIError // what to return when giving up
	usage      *model.Usage   // usage of a stream that failed after message_start
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
// failure saying what went wrong.
func (p *Provider) attempt(ctx context.Context, body []byte, betas []string, h model.Handler) (*model.Response, *failure) {
	start := p.now()
	opts := []option.RequestOption{option.WithQuery("beta", "true")}
	if len(betas) > 0 {
		opts = append(opts, option.WithHeader("anthropic-beta", strings.Join(betas, ",")))
	}
	var res *http.Response
	err := p.client.Post(ctx, "v1/messages", body, &res, opts...)
	if err != nil {
		var ae *sdk.Error
		if errors.As(err, &ae) && ae.StatusCode != 0 {
			return nil, statusFailure(ae)
		}
		return nil, connFailure(err)
	}
	if res == nil || res.Body == nil {
		return nil, connFailure(errors.New("no response"))
	}
	defer res.Body.Close()
	requestID := res.Header.Get("request-id")
	if res.StatusCode < 200 || res.StatusCode > 299 {
		f := connFailure(fmt.Errorf("unexpected HTTP status %d", res.StatusCode))
		f.apiErr.RequestID = requestID
		return nil, f
	}

	s := newStreamState(h, func() time.Duration { return p.now().Sub(start) })
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
	resp.Duration = p.now().Sub(start)
	return resp, nil
}

// statusFailure describes an HTTP error answer.
func statusFailure(ae *sdk.Error) *failure {
	f := &failure{status: ae.StatusCode}
	switch {
	case ae.StatusCode == 529:
		f.kind, f.retry, f.overloaded = "overloaded", true, true
	case ae.StatusCode == http.StatusTooManyRequests:
		f.kind, f.retry = "rate_limit", true
	case ae.StatusCode == http.StatusUnauthorized:
		f.kind, f.retry = "authentication_failed", true
	case ae.StatusCode >= 500:
		f.kind, f.retry = "server_error", true
	}
	f.announce = f.retry
	msg := ae.Message
	if msg == "" {
		msg = strings.TrimSpace(ae.RawJSON())
		if len(msg) > 1000 {
			msg = msg[:1000] + "…"
		}
	}
	if msg == "" {
		msg = http.StatusText(ae.StatusCode)
	}
	f.apiErr = model.APIError{
		Status:    ae.StatusCode,
		Type:      string(ae.Type()),
		Message:   msg,
		RequestID: ae.RequestID,
	}
	if ae.Response != nil {
		f.retryAfter = retryAfter(ae.Response.Header)
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
	return &failure{
		kind:     "connection_error",
		retry:    true,
		announce: true,
		err:      err,
		apiErr:   model.APIError{Err: err},
	}
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

// retryAfter reads a positive retry-after header, in seconds. Values over a
// day are taken for garbage and ignored.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || !(secs > 0 && secs <= 24*3600) {
		return 0
	}
	return time.Duration(secs * float64(time.Second))
}
