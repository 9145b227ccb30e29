package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// The HTTP client of a Provider: what the official Go SDK's client did for
// this package (base URL, default headers, middleware, errors of HTTP
// status), in a page of net/http. The SDK's client linked its whole API
// surface, OpenTelemetry, a YAML parser and a JSON Schema generator into
// every program that imports agentloop, and ran their initialisers at
// every start; this package only ever posted a body it had encoded itself
// and read the answer as it came.

// next sends a request on: the rest of the middleware chain, then the
// HTTP client.
type next func(*http.Request) (*http.Response, error)

// middleware sees every request on its way out and its response on the
// way back. The platforms' middleware rewrites and signs requests, so it
// is the last in the chain, closest to the wire.
type middleware func(*http.Request, next) (*http.Response, error)

// apiClient posts requests to one base URL with a fixed set of headers.
// It holds no state of its own beyond its configuration and is safe for
// concurrent use.
type apiClient struct {
	hc      *http.Client
	base    *url.URL    // ends in "/"
	header  http.Header // sent with every request; a request's own win
	chain   []middleware
	maxBody int64 // the most of an error answer's body that is read
	// urls holds the URL of each path and query posted to (a urlKey →
	// its string): a provider posts to one or two, and joining and
	// printing the URL again for every request cost five allocations.
	// Callers pass constant paths and queries (post's contract); one that
	// varied per request would grow the map without bound.
	urls sync.Map
}

// urlKey is a path and query of apiClient.urls.
type urlKey struct{ path, query string }

// jsonValue is the value of the Content-Type and Accept headers. Requests
// share it, as they share the client's header values: nothing changes a
// header's values in place (Set and Add replace the slice).
var jsonValue = []string{"application/json"}

// statusError is an answer with an HTTP status outside 2xx: the status,
// the error the body describes ({"type":"error","error":{"type",
// "message"}}) and the response, whose body has been read and closed.
type statusError struct {
	StatusCode int
	Type       string // error.type of the body, "" when it has none
	Message    string // error.message of the body, "" when it has none
	RequestID  string // the body's request_id, else the request-id header
	Raw        []byte // the body as read (at most maxBody bytes)
	Response   *http.Response
	method     string
	url        string
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("%s %q: %d %s", e.method, e.url, e.StatusCode, http.StatusText(e.StatusCode))
	if e.RequestID != "" {
		msg += " (request-id " + e.RequestID + ")"
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// newAPIClient returns a client of baseURL (an http or https URL, already
// checked) sending header with every request through chain.
func newAPIClient(hc *http.Client, baseURL string, header http.Header, chain []middleware) (*apiClient, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("anthropic: base URL %q: %w", baseURL, err)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return &apiClient{hc: hc, base: u, header: header, chain: chain, maxBody: 1 << 20}, nil
}

// post sends body (of length n; nil for none) to path, relative to the
// base URL, with query and the extra headers, and returns the response of
// a 2xx answer with its body open. Any other status is a *statusError.
// path and query come from a small fixed set: their URL is kept (urls).
// getBody, when not nil, gives the body again for a redirect.
func (c *apiClient) post(ctx context.Context, path, query string, body io.Reader, n int64, getBody func() (io.ReadCloser, error), extra http.Header) (*http.Response, error) {
	if c.base.Scheme == "https" {
		// The trace that lets the dial gate share a dial among requests
		// to an HTTP/2 host (dialgate.go).
		var w *dialWant
		ctx, w = withDialWant(ctx, c.base)
		defer w.done()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(path, query), body)
	if err != nil {
		return nil, fmt.Errorf("anthropic: building the request: %w", err)
	}
	if body != nil {
		req.ContentLength = n
		if getBody != nil {
			req.GetBody = getBody
		}
	}
	// The map made at its final size, the keys already canonical: no
	// growth and no copy of a key or value.
	req.Header = make(http.Header, len(c.header)+2+len(extra))
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	req.Header["Content-Type"] = jsonValue
	req.Header["Accept"] = jsonValue
	for k, vs := range extra {
		req.Header[k] = vs
	}
	res, err := c.send(req, 0)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 200 && res.StatusCode <= 299 {
		return res, nil
	}
	return nil, c.statusError(req, res)
}

// url returns the URL of path (relative to the base URL) with query.
func (c *apiClient) url(path, query string) string {
	k := urlKey{path, query}
	if v, ok := c.urls.Load(k); ok {
		return v.(string)
	}
	u := c.base.JoinPath(path)
	u.RawQuery = query
	v, _ := c.urls.LoadOrStore(k, u.String())
	return v.(string)
}

// send passes req through the middleware from i on, then to the client.
func (c *apiClient) send(req *http.Request, i int) (*http.Response, error) {
	if i == len(c.chain) {
		return c.hc.Do(req)
	}
	return c.chain[i](req, func(r *http.Request) (*http.Response, error) { return c.send(r, i+1) })
}

// statusError reads the error answer res and closes its body.
func (c *apiClient) statusError(req *http.Request, res *http.Response) *statusError {
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, c.maxBody)) // what could be read is what there is
	e := &statusError{StatusCode: res.StatusCode, Raw: raw, Response: res, method: req.Method, url: req.URL.Redacted()}
	var b struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(raw, &b) == nil {
		e.Type, e.Message, e.RequestID = b.Error.Type, b.Error.Message, b.RequestID
	}
	if e.RequestID == "" {
		e.RequestID = res.Header.Get("request-id")
	}
	return e
}

// headerOf returns the pairs k1, v1, k2, v2, … as a header, without the
// empty values.
func headerOf(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			h.Set(kv[i], kv[i+1])
		}
	}
	return h
}
