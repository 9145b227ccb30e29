package anthropic

// Amazon Bedrock, without the SDK's bedrock package and the AWS SDK's
// configuration stack: the request is rewritten and signed here (SigV4 by
// the signer of the AWS SDK's core module), the event-stream answer turned
// into the server-sent events every platform's reader takes, and the
// credentials found by the small chain of awscreds.go. The bedrock package
// linked the official SDK's client, and aws-sdk-go-v2/config linked the
// STS, SSO and Sign-In clients whose endpoint tables every start of every
// program built their maps for (4,700 allocations, the largest share of
// the CLI's start-up).

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// bedrockAuth is how Bedrock requests are authenticated: exactly one of a
// bearer token (AWS_BEARER_TOKEN_BEDROCK) and credentials to sign with,
// or neither when authentication is skipped.
type bedrockAuth struct {
	bearer string
	creds  aws.CredentialsProvider
	region string
	now    func() time.Time
}

// bedrockRewrite is the middleware of a Bedrock provider: it turns a
// Messages API request into Bedrock's InvokeModel form (the model and
// stream out of the body and into the path, the API version and betas
// from headers into the body), authenticates it, and gives the response's
// event stream to the layers above as server-sent events.
func bedrockRewrite(auth bedrockAuth) middleware {
	signer := v4.NewSigner()
	return func(r *http.Request, next next) (*http.Response, error) {
		version := r.Header.Get("anthropic-version")
		r.Header.Del("anthropic-version")
		betas := splitBetas(r.Header.Values("anthropic-beta"))
		r.Header.Del("anthropic-beta")
		var body []byte
		if r.Body != nil {
			var err error
			body, err = io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil {
				return nil, fmt.Errorf("anthropic: bedrock: reading the request body: %w", err)
			}
			if body, err = bedrockBody(r, body, version, betas); err != nil {
				return nil, err
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			r.ContentLength = int64(len(body))
		}
		switch {
		case auth.bearer != "":
			r.Header.Set("Authorization", "Bearer "+auth.bearer)
		case auth.creds != nil:
			creds, err := auth.creds.Retrieve(r.Context())
			if err != nil {
				return nil, err
			}
			sum := sha256.Sum256(body)
			if err := signer.SignHTTP(r.Context(), creds, r, hex.EncodeToString(sum[:]), "bedrock", auth.region, auth.now()); err != nil {
				return nil, fmt.Errorf("anthropic: bedrock: signing the request: %w", err)
			}
		default:
			r.Header.Del("Authorization")
		}
		res, err := next(r)
		if err != nil || res == nil {
			return res, err
		}
		if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); res.StatusCode < 300 && mt == "application/vnd.amazon.eventstream" {
			res.Body = &eventStreamSSE{rc: res.Body}
			res.Header.Set("Content-Type", "text/event-stream")
			res.Header.Del("Content-Length")
			res.ContentLength = -1
		}
		return res, nil
	}
}

// splitBetas returns the betas of anthropic-beta header values, in order.
func splitBetas(values []string) []string {
	var out []string
	for _, v := range values {
		for b := range strings.SplitSeq(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				out = append(out, b)
			}
		}
	}
	return out
}

// bedrockBody rewrites a request to /v1/messages: its body (a JSON
// object; anything else is sent as it is) and its path.
func bedrockBody(r *http.Request, body []byte, version string, betas []string) ([]byte, error) {
	o, ok := parseObject(body)
	if !ok {
		return body, nil
	}
	if _, has := o["anthropic_version"]; version != "" && !has {
		if err := o.set("anthropic_version", version); err != nil {
			return nil, fmt.Errorf("anthropic: bedrock: %w", err)
		}
	}
	if len(betas) > 0 {
		if err := o.set("anthropic_beta", betas); err != nil {
			return nil, fmt.Errorf("anthropic: bedrock: %w", err)
		}
	}
	if r.Method == http.MethodPost && strings.TrimSuffix(r.URL.Path, "/") == "/v1/messages" {
		model := o.str("model")
		if model == "" {
			return nil, errors.New("anthropic: bedrock: the request names no model")
		}
		method := "invoke"
		if o.truth("stream") {
			method = "invoke-with-response-stream"
		}
		delete(o, "model")
		delete(o, "stream")
		// The model is one escaped path segment: a "/" in it cannot
		// reach another path.
		r.URL.Path = "/model/" + model + "/" + method
		r.URL.RawPath = "/model/" + url.PathEscape(model) + "/" + method
	}
	out, err := o.bytes()
	if err != nil {
		return nil, fmt.Errorf("anthropic: bedrock: %w", err)
	}
	return out, nil
}

// eventStreamSSE reads a Bedrock answer in AWS event-stream framing as
// server-sent events: each chunk's payload (base64 JSON of one Messages
// API event) becomes "event: <type>" and its data; an exception or error
// message becomes an error event shaped like the first-party API's, so
// that it is retried or reported as one.
type eventStreamSSE struct {
	rc  io.ReadCloser
	dec *eventstream.Decoder
	buf bytes.Buffer
	err error
}

// Read implements [io.Reader].
func (s *eventStreamSSE) Read(p []byte) (int, error) {
	if s.dec == nil {
		s.dec = eventstream.NewDecoder()
	}
	for s.buf.Len() == 0 && s.err == nil {
		msg, err := s.dec.Decode(s.rc, nil)
		if err != nil {
			s.err = err // io.EOF at the end of the stream
			break
		}
		s.err = s.translate(msg)
	}
	if s.buf.Len() > 0 {
		return s.buf.Read(p)
	}
	return 0, s.err
}

// Close implements [io.Closer].
func (s *eventStreamSSE) Close() error { return s.rc.Close() }

// translate appends msg's events to the buffer.
func (s *eventStreamSSE) translate(msg eventstream.Message) error {
	header := func(name string) string {
		if v := msg.Headers.Get(name); v != nil {
			return v.String()
		}
		return ""
	}
	switch kind := header(":message-type"); kind {
	case "event":
		if header(":event-type") != "chunk" {
			return nil // not a model event (none is documented)
		}
		var chunk struct {
			Bytes string `json:"bytes"`
		}
		if err := json.Unmarshal(msg.Payload, &chunk); err != nil {
			return fmt.Errorf("bedrock event stream: chunk: %w", err)
		}
		data, err := base64.StdEncoding.DecodeString(chunk.Bytes)
		if err != nil {
			return fmt.Errorf("bedrock event stream: chunk: %w", err)
		}
		var ev struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("bedrock event stream: chunk: %w", err)
		}
		s.event(ev.Type, data)
	case "exception":
		var e struct {
			Message string `json:"message"`
			Upper   string `json:"Message"`
		}
		_ = json.Unmarshal(msg.Payload, &e) // a payload that says nothing leaves the type alone to say it
		s.errorEvent(cmp.Or(header(":exception-type"), "UnknownError"), cmp.Or(e.Message, e.Upper, header(":exception-type"), "UnknownError"))
	case "error":
		s.errorEvent(cmp.Or(header(":error-code"), "UnknownError"), cmp.Or(header(":error-message"), header(":error-code"), "UnknownError"))
	default:
		return fmt.Errorf("bedrock event stream: message type %q", kind)
	}
	return nil
}

// errorEvent appends an error event of the first-party API's shape.
func (s *eventStreamSSE) errorEvent(typ, message string) {
	type apiError struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	data, _ := json.Marshal(struct { // strings only: cannot fail
		Type  string   `json:"type"`
		Error apiError `json:"error"`
	}{"error", apiError{typ, message}})
	s.event("error", data)
}

// event appends one server-sent event.
func (s *eventStreamSSE) event(typ string, data []byte) {
	s.buf.WriteString("event: ")
	s.buf.WriteString(typ)
	s.buf.WriteByte('\n')
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		s.buf.WriteString("data: ")
		s.buf.Write(line)
		s.buf.WriteByte('\n')
	}
	s.buf.WriteByte('\n')
}
