package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentloop/agentloop/internal/httpretry"
	"github.com/agentloop/agentloop/model"
)

// Version is sent in the User-Agent header as agentloop/Version.
var Version = "0.1.0"

// Environment variables read by [New] when the matching [Options] field is
// empty.
const (
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvBaseURL = "OPENAI_BASE_URL"
)

// Defaults.
const (
	// DefaultBaseURL is the API's address when neither Options.BaseURL nor
	// OPENAI_BASE_URL is set.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultMaxRetries is how many times a failed request is retried when
	// Options.MaxRetries is nil.
	DefaultMaxRetries = 10
	// DefaultStreamIdleTimeout is the longest silence allowed between two
	// events of a stream when Options.StreamIdleTimeout is zero.
	DefaultStreamIdleTimeout = 300 * time.Second
)

// Options configures a [Provider]. The zero value (or nil) talks to
// api.openai.com with OPENAI_API_KEY, or to OPENAI_BASE_URL when set.
type Options struct {
	// APIKey is sent as Authorization: Bearer. Empty: OPENAI_API_KEY;
	// when that is empty too, no Authorization header is sent (local
	// servers such as ollama need none).
	APIKey string
	// BaseURL is the API's address including its version path, e.g.
	// http://localhost:11434/v1 for ollama; requests go to
	// {BaseURL}/chat/completions. Empty: OPENAI_BASE_URL, else
	// [DefaultBaseURL].
	BaseURL string
	// HTTPClient sends the requests. Nil: a client with no timeout of its
	// own (the provider's timeouts bound each attempt).
	HTTPClient *http.Client
	// Headers are added to every request, after the provider's own.
	Headers map[string]string
	// MaxRetries is how many times a failed request is retried. Nil:
	// [DefaultMaxRetries]. Zero: no retry. The SDK's own retries are always
	// off; the provider retries by itself.
	MaxRetries *int
	// Timeout bounds one attempt as a whole, from sending the request to
	// the end of the stream; each retry gets its own. Zero or negative: no
	// limit (the idle timeout still catches a stalled stream).
	Timeout time.Duration
	// StreamIdleTimeout is the longest wait for the next event of a
	// stream, the first included. Zero: [DefaultStreamIdleTimeout];
	// negative: no limit.
	StreamIdleTimeout time.Duration

	// API is the API spoken: [APIChatCompletions] (empty; every
	// compatible server) or [APIResponses] (OpenAI's Responses API, for
	// models served only there). Anything else makes [New] fail.
	API string

	// Model, when set, replaces the model of every request that ModelMap
	// does not name: the agent loop asks for Anthropic model ids, which an
	// OpenAI-compatible server does not serve.
	Model string
	// ModelMap maps the model of a request to the model sent, e.g.
	// {"claude-haiku-5-5": "llama3.2:3b"} for the loop's small tasks.
	ModelMap map[string]string
	// LegacyMaxTokens sends the request's token limit as max_tokens instead
	// of max_completion_tokens, for servers that only know the older field.
	LegacyMaxTokens bool
	// NoReasoningEffort never sends reasoning_effort, for models that
	// reject it. Otherwise the request's effort (Output.Effort) is sent
	// as reasoning_effort, "max" as "xhigh".
	NoReasoningEffort bool

	// Sleep waits d before a retry, returning early with ctx.Err() when
	// ctx is done. Nil: a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the clock for TTFT and Duration. Nil: time.Now.
	Now func() time.Time
	// Jitter returns a number in [0, 1) that scales the random part of a
	// retry delay. Nil: math/rand/v2.Float64.
	Jitter func() float64
}

// Provider streams replies from a Chat Completions endpoint. It implements
// [model.Provider] and is safe for concurrent use. Create it with [New].
type Provider struct {
	client            sdk.Client
	api               string
	endpoint          string // host[:port] of the base URL
	maxRetries        int
	timeout, idle     time.Duration
	modelName         string
	modelMap          map[string]string
	legacyMaxTokens   bool
	noReasoningEffort bool
	sleep             func(context.Context, time.Duration) error
	now               func() time.Time
	jitter            func() float64
	noEffort          sync.Map // model name → true: the server rejected reasoning_effort for it
}

var _ model.Provider = (*Provider)(nil)

// New returns a Provider configured by opts, which may be nil. It fails
// when the base URL is not an http or https URL.
func New(opts *Options) (*Provider, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.APIKey == "" {
		o.APIKey = os.Getenv(EnvAPIKey)
	}
	if o.BaseURL == "" {
		o.BaseURL = os.Getenv(EnvBaseURL)
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q: want an http or https URL", o.BaseURL)
	}
	api, err := checkAPI(o.API)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(o.BaseURL, "/") + "/"
	hc := o.HTTPClient
	if hc == nil {
		hc = sharedClient()
	}
	copts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithAPIKey(o.APIKey),
		option.WithAdminAPIKey(""), // never send OPENAI_ADMIN_KEY, whatever the server
		option.WithHeader("User-Agent", "agentloop/"+Version),
		option.WithHeader("Accept", "text/event-stream"),
	}
	for k, v := range o.Headers {
		copts = append(copts, option.WithHeader(k, v))
	}
	p := &Provider{
		client:            sdk.NewClient(copts...),
		api:               api,
		endpoint:          u.Host,
		maxRetries:        DefaultMaxRetries,
		timeout:           max(o.Timeout, 0),
		idle:              o.StreamIdleTimeout,
		modelName:         o.Model,
		modelMap:          o.ModelMap,
		legacyMaxTokens:   o.LegacyMaxTokens,
		noReasoningEffort: o.NoReasoningEffort,
		sleep:             o.Sleep,
		now:               o.Now,
		jitter:            o.Jitter,
	}
	if o.MaxRetries != nil {
		p.maxRetries = max(*o.MaxRetries, 0)
	}
	switch {
	case p.idle == 0:
		p.idle = DefaultStreamIdleTimeout
	case p.idle < 0:
		p.idle = 0
	}
	if p.sleep == nil {
		p.sleep = httpretry.Sleep
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.jitter == nil {
		p.jitter = rand.Float64
	}
	return p, nil
}

// sharedClient is the HTTP client of providers created without one: one
// connection pool per process.
var sharedClient = sync.OnceValue(func() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{}
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: t}
})

// ModelFor returns the model name sent for a request asking for name:
// ModelMap's entry, else Options.Model, else name itself.
func (p *Provider) ModelFor(name string) string {
	if m, ok := p.modelMap[name]; ok && m != "" {
		return m
	}
	if p.modelName != "" {
		return p.modelName
	}
	return name
}

// Stream sends req as one streaming call (Chat Completions, or the
// Responses API per Options.API) and returns the reply translated to the
// Messages API's shape, retrying transient failures
// as the package documentation describes. h may be nil. It fails with a
// [*model.APIError] when the server answers with an error or retries run
// out, with an error wrapping ctx.Err() when ctx ends first, and with a
// plain error for a nil request.
func (p *Provider) Stream(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	if req == nil {
		return nil, errors.New("openai: nil request")
	}
	if h == nil {
		h = model.NopHandler{}
	}
	modelName := p.ModelFor(req.Model)
	var wb wireBody
	if p.api == APIResponses {
		wb = p.translateResponses(req, modelName)
	} else {
		wb = p.translate(req, modelName)
	}
	if _, ok := p.noEffort.Load(modelName); ok {
		wb.dropEffort()
	}
	body, err := json.Marshal(wb)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	var (
		failed  model.Usage
		first   time.Time
		retries int
	)
	for {
		if err := ctx.Err(); err != nil {
			return nil, canceled(err)
		}
		resp, f := p.attempt(ctx, body, modelName, h, &first)
		if f == nil {
			resp.FailedUsage = failed
			resp.Duration = p.now().Sub(first)
			return resp, nil
		}
		if f.usage != nil {
			failed = failed.Add(*f.usage)
		}
		if err := ctx.Err(); err != nil {
			return nil, canceled(err)
		}
		if effortRejected(f) && wb.dropEffort() {
			// A model without reasoning: send the request again at
			// once without the effort, and never again with it.
			p.noEffort.Store(modelName, true)
			if body, err = json.Marshal(wb); err != nil {
				return nil, fmt.Errorf("openai: encoding request: %w", err)
			}
			continue
		}
		if !f.retry || retries >= p.maxRetries {
			e := f.apiErr
			e.Retries = retries
			e.Endpoint = p.endpoint
			return nil, &e
		}
		retries++
		delay := p.backoff(retries, f.retryAfter)
		if f.announce {
			h.Retry(model.RetryInfo{
				Attempt: retries, MaxRetries: p.maxRetries, Delay: delay,
				Status: f.status, Kind: f.kind, Err: f.err,
			})
		}
		if err := p.sleep(ctx, delay); err != nil {
			return nil, canceled(err)
		}
	}
}

func canceled(err error) error { return fmt.Errorf("openai: %w", err) }

// backoff returns the wait before retry number n (1 for the first).
func (p *Provider) backoff(n int, retryAfter time.Duration) time.Duration {
	return httpretry.Backoff(n, retryAfter, p.jitter())
}

// failure is one failed attempt: whether to retry it and what to report if
// it is the last.
type failure struct {
	kind       string // RetryInfo.Kind
	status     int
	retry      bool
	announce   bool // whether Handler.Retry hears about the retry
	retryAfter time.Duration
	err        error          // for RetryInfo.Err
	apiErr     model.APIError // returned when giving up
	usage      *model.Usage   // usage of a stream that failed after it started
}

// TimeoutError is the failure of an attempt the provider cut short: the
// stream went silent (Which "idle") or the attempt took longer than
// Options.Timeout ("request"). It is retried like a connection error; when
// retries run out the returned [*model.APIError] wraps it.
type TimeoutError struct {
	Which string
	After time.Duration
}

func (e *TimeoutError) Error() string {
	if e.Which == "idle" {
		return fmt.Sprintf("stream stalled: no event for %v", e.After)
	}
	return fmt.Sprintf("request timed out after %v", e.After)
}

// attempt makes one request and reads its stream under the timeouts.
func (p *Provider) attempt(ctx context.Context, body []byte, modelName string, h model.Handler, first *time.Time) (*model.Response, *failure) {
	start := p.now()
	if first.IsZero() {
		*first = start
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var idle *time.Timer
	if p.idle > 0 {
		idle = time.AfterFunc(p.idle, func() { cancel(&TimeoutError{Which: "idle", After: p.idle}) })
		defer idle.Stop()
	}
	if p.timeout > 0 {
		whole := time.AfterFunc(p.timeout, func() { cancel(&TimeoutError{Which: "request", After: p.timeout}) })
		defer whole.Stop()
	}
	onChunk := func() {
		if idle != nil {
			idle.Reset(p.idle)
		}
	}
	resp, f := p.exchange(actx, start, body, modelName, h, onChunk)
	var te *TimeoutError
	if f != nil && ctx.Err() == nil && errors.As(context.Cause(actx), &te) {
		tf := connFailure(te)
		tf.usage, tf.apiErr.RequestID = f.usage, f.apiErr.RequestID
		return nil, tf
	}
	return resp, f
}

// exchange sends the request and reads the reply.
func (p *Provider) exchange(ctx context.Context, start time.Time, body []byte, modelName string, h model.Handler, onChunk func()) (*model.Response, *failure) {
	var res *http.Response
	path := chatPath
	if p.api == APIResponses {
		path = responsesPath
	}
	err := p.client.Post(ctx, path, body, &res)
	if res != nil && res.StatusCode >= 400 && res.Body != nil {
		defer res.Body.Close()
		return nil, statusFailure(res)
	}
	if err != nil {
		var ae *sdk.Error
		if errors.As(err, &ae) && ae.Response != nil {
			return nil, statusFailure(ae.Response)
		}
		return nil, connFailure(err)
	}
	if res == nil || res.Body == nil {
		return nil, connFailure(errNoBody)
	}
	defer res.Body.Close()
	requestID := res.Header.Get("x-request-id")
	s := &streamState{h: h, model: modelName, onChunk: onChunk, responses: p.api == APIResponses,
		elapsed: func() time.Duration { return p.now().Sub(start) }}
	var resp *model.Response
	switch ct := res.Header.Get("Content-Type"); {
	case ct == "" || strings.HasPrefix(ct, "text/event-stream"):
		resp, err = s.read(res.Body)
	case strings.HasPrefix(ct, "application/json") && p.api == APIChatCompletions:
		// A server that ignored "stream": the whole completion at once.
		resp, err = s.readCompletion(res.Body)
	default:
		err = malformed("response is not an event stream (Content-Type %s)", ct)
	}
	if err != nil {
		f := streamFailure(err)
		f.apiErr.RequestID = requestID
		if s.usage != nil {
			u := *s.usage
			f.usage = &u
		}
		return nil, f
	}
	resp.RequestID = requestID
	return resp, nil
}

// statusFailure describes an HTTP error answer: 429, 5xx (and 408, 409)
// are retried; the rest (400, 401, 403, 404, …) are not.
func statusFailure(res *http.Response) *failure {
	st := res.StatusCode
	f := &failure{status: st}
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	msg, code := errorMessage(raw)
	typ := model.ErrorTypeForStatus(st)
	switch {
	case code == "insufficient_quota":
		typ = "billing_error" // a 429 that waiting does not cure
	case st == http.StatusTooManyRequests:
		f.kind, f.retry = "rate_limit", true
	case st == http.StatusRequestTimeout || st == http.StatusConflict:
		f.kind, f.retry = "server_error", true
	case st >= 500:
		f.kind, f.retry = "server_error", true
		if st == 529 {
			f.kind = "overloaded"
		}
	}
	f.announce = f.retry
	if msg == "" {
		msg = http.StatusText(st)
	}
	if code != "" && !strings.Contains(msg, code) {
		msg = code + ": " + msg
	}
	f.apiErr = model.APIError{Status: st, Type: typ, Message: msg, RequestID: res.Header.Get("x-request-id")}
	f.retryAfter = httpretry.After(res.Header)
	e := f.apiErr
	f.err = &e
	return f
}

// effortRejected reports whether f is a 400 answer that complains about
// the reasoning effort (OpenAI's "Unrecognized request argument" or
// "Unsupported parameter" for a model without reasoning).
func effortRejected(f *failure) bool {
	m := f.apiErr.Message
	return f.status == http.StatusBadRequest && (strings.Contains(m, "reasoning_effort") || strings.Contains(m, "reasoning.effort"))
}

// errorMessage reads an error body: OpenAI's {"error":{"message","code"}},
// the {"error":"text"} of some compatible servers, or plain text.
func errorMessage(raw []byte) (msg, code string) {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return truncate(strings.TrimSpace(string(raw)), 1000), ""
	}
	var e errorPayload
	var s string
	switch {
	case json.Unmarshal(body.Error, &e) == nil && e.Message != "":
		msg = e.Message
		if json.Unmarshal(e.Code, &code) != nil && len(e.Code) > 0 && string(e.Code) != "null" {
			code = string(e.Code)
		}
	case json.Unmarshal(body.Error, &s) == nil:
		msg = s
	default:
		msg = body.Message
	}
	if msg == "" {
		msg = truncate(strings.TrimSpace(string(raw)), 1000)
	}
	return msg, code
}

// connFailure describes a request that got no usable answer.
func connFailure(err error) *failure {
	f := &failure{kind: "connection_error", retry: true, announce: true, err: err, apiErr: model.APIError{Err: err}}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		f.retry = false // the name will not resolve on the next try either
	}
	return f
}

// streamFailure describes a stream that broke: an error in it (retried
// without a Retry announcement, as the anthropic provider does) or a
// malformed or dropped stream (retried as a connection error).
func streamFailure(err error) *failure {
	var se *streamError
	if errors.As(err, &se) {
		return &failure{kind: "stream_error", retry: true, err: err,
			apiErr: model.APIError{Type: se.Type, Message: se.Message}}
	}
	return connFailure(err)
}
