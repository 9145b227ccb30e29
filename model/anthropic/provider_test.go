package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentloop/agentloop/internal/httpretry"
	"github.com/agentloop/agentloop/model"
)

var ignoreRetryErr = cmpopts.IgnoreFields(model.RetryInfo{}, "Err")

func TestRequestBodyAndHeaders(t *testing.T) {
	yes := true
	req := &model.Request{
		Model: "claude-opus-5-5",
		Messages: []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock("<system-reminder>note</system-reminder>"), model.TextBlock("Run ls & tell me")}},
			{Role: "assistant", Content: []model.Content{
				{Type: "thinking", Thinking: "hmm", Signature: "sig=="},
				{Type: "tool_use", ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
			}},
			{Role: "user", Content: []model.Content{{Type: "tool_result", ToolUseID: "toolu_1", Text: "a\nb", IsError: &yes,
				CacheControl: &model.CacheControl{Type: "ephemeral"}}}},
		},
		System:    []model.Content{model.TextBlock("You are agentloop.")},
		Tools:     []model.ToolDef{{Name: "Bash", Description: "Runs a command.", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}},
		Metadata:  &model.Metadata{UserID: `{"device_id":"d","account_uuid":"","session_id":"s"}`},
		MaxTokens: 128000,
		Thinking:  &model.Thinking{Type: "adaptive", Display: "updates"},
		Output:    &model.OutputConfig{Effort: "medium"},
		Betas:     []string{"claude-code-20250219", "interleaved-thinking-2025-05-14"},
	}
	f := newFakeAPI(t, sseReply(helloStream()))
	p, _ := testProvider(t, f, func(o *Options) { o.Headers = map[string]string{"X-Extra": "1"} })
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if req.Stream {
		t.Error("Stream modified the request")
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	got := reqs[0]

	sent := *req
	sent.Stream = true
	wantBody, err := json.Marshal(&sent)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Body) != string(wantBody) {
		t.Errorf("body:\n got %s\nwant %s", got.Body, wantBody)
	}
	if !strings.HasSuffix(string(got.Body), `"stream":true}`) {
		t.Errorf("body does not end with stream true: %s", got.Body)
	}

	if got.Method != http.MethodPost || got.Path != "/v1/messages" || got.Query != "beta=true" {
		t.Errorf("request line %s %s?%s, want POST /v1/messages?beta=true", got.Method, got.Path, got.Query)
	}
	for k, want := range map[string]string{
		"User-Agent":        "agentloop/0.1.0",
		"Anthropic-Version": "2023-06-01",
		"Anthropic-Beta":    "claude-code-20250219,interleaved-thinking-2025-05-14",
		"X-Api-Key":         "sk-test",
		"Content-Type":      "application/json",
		"X-Extra":           "1",
		"Authorization":     "",
		"X-App":             "",
	} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	for k, vs := range got.Header {
		for _, v := range vs {
			if strings.Contains(strings.ToLower(v), "claude-cli") || strings.Contains(strings.ToLower(k), "claude-code") {
				t.Errorf("header %s: %s identifies the reference CLI", k, v)
			}
		}
	}
}

func TestNoBetaHeaderWithoutBetas(t *testing.T) {
	f := newFakeAPI(t, sseReply(helloStream()))
	p, _ := testProvider(t, f, nil)
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if v, ok := f.requests()[0].Header["Anthropic-Beta"]; ok {
		t.Errorf("anthropic-beta sent without betas: %q", v)
	}
}

func TestCredentials(t *testing.T) {
	f := newFakeAPI(t, sseReply(helloStream()))
	tests := []struct {
		name                string
		env                 map[string]string
		opts                *Options
		wantKey, wantBearer string
		wantErr             error
	}{{
		name:    "none",
		opts:    &Options{BaseURL: f.URL},
		wantErr: ErrNoCredentials,
	}, {
		name:    "nil options, empty environment",
		wantErr: ErrNoCredentials,
	}, {
		name:    "API key from the environment",
		env:     map[string]string{"ANTHROPIC_API_KEY": "sk-env", "ANTHROPIC_BASE_URL": f.URL},
		wantKey: "sk-env",
	}, {
		name:       "auth token from the environment",
		env:        map[string]string{"ANTHROPIC_AUTH_TOKEN": "tok-env", "ANTHROPIC_BASE_URL": f.URL},
		wantBearer: "Bearer tok-env",
	}, {
		name:       "both from the environment",
		env:        map[string]string{"ANTHROPIC_API_KEY": "sk-env", "ANTHROPIC_AUTH_TOKEN": "tok-env", "ANTHROPIC_BASE_URL": f.URL},
		wantKey:    "sk-env",
		wantBearer: "Bearer tok-env",
	}, {
		name:       "options win over the environment",
		env:        map[string]string{"ANTHROPIC_API_KEY": "sk-env", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"},
		opts:       &Options{AuthToken: "tok", BaseURL: f.URL},
		wantBearer: "Bearer tok",
	}, {
		name:    "credential header",
		opts:    &Options{BaseURL: f.URL, Headers: map[string]string{"x-api-key": "sk-header"}},
		wantKey: "sk-header",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"} {
				t.Setenv(k, tt.env[k])
			}
			p, err := New(tt.opts)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("New = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := len(f.requests())
			if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
				t.Fatal(err)
			}
			h := f.requests()[n].Header
			if got := h.Get("X-Api-Key"); got != tt.wantKey {
				t.Errorf("x-api-key = %q, want %q", got, tt.wantKey)
			}
			if got := h.Get("Authorization"); got != tt.wantBearer {
				t.Errorf("authorization = %q, want %q", got, tt.wantBearer)
			}
		})
	}
}

func TestErrNoCredentialsNamesVariables(t *testing.T) {
	for _, v := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} {
		if !strings.Contains(ErrNoCredentials.Error(), v) {
			t.Errorf("ErrNoCredentials %q does not name %s", ErrNoCredentials, v)
		}
	}
}

func TestBadBaseURL(t *testing.T) {
	for _, u := range []string{"ftp://x", "127.0.0.1:8080", "http://"} {
		if _, err := New(&Options{APIKey: "k", BaseURL: u}); err == nil {
			t.Errorf("New with base URL %q succeeded", u)
		}
	}
}

func TestBaseURLPathKept(t *testing.T) {
	f := newFakeAPI(t, sseReply(helloStream()))
	p, _ := testProvider(t, f, func(o *Options) { o.BaseURL = f.URL + "/gateway" })
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if got := f.requests()[0].Path; got != "/gateway/v1/messages" {
		t.Errorf("path = %s, want /gateway/v1/messages", got)
	}
}

func TestRetries(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name        string
		replies     []reply
		maxRetries  *int
		wantErr     *model.APIError // nil: success
		wantReqs    int
		wantRetries []model.RetryInfo
		wantDelays  []time.Duration
	}{{
		name: "500 twice then success",
		replies: []reply{
			errorReply(500, "api_error", "Internal server error"),
			errorReply(500, "api_error", "Internal server error"),
			sseReply(helloStream()),
		},
		wantReqs: 3,
		wantRetries: []model.RetryInfo{
			{Attempt: 1, MaxRetries: 10, Delay: 500 * ms, Status: 500, Kind: "server_error"},
			{Attempt: 2, MaxRetries: 10, Delay: 1000 * ms, Status: 500, Kind: "server_error"},
		},
		wantDelays: []time.Duration{500 * ms, 1000 * ms},
	}, {
		name: "500 then 529 then success",
		replies: []reply{
			errorReply(500, "api_error", "Internal server error"),
			errorReply(529, "overloaded_error", "Overloaded"),
			sseReply(helloStream()),
		},
		wantReqs: 3,
		wantRetries: []model.RetryInfo{
			{Attempt: 1, MaxRetries: 10, Delay: 500 * ms, Status: 500, Kind: "server_error"},
			{Attempt: 2, MaxRetries: 10, Delay: 1000 * ms, Status: 529, Kind: "overloaded"},
		},
		wantDelays: []time.Duration{500 * ms, 1000 * ms},
	}, {
		name:     "529 three times",
		replies:  []reply{errorReply(529, "overloaded_error", "Overloaded", "retry-after", "0")},
		wantReqs: 3,
		wantErr:  &model.APIError{Status: 529, Type: "overloaded_error", Message: "Overloaded", Retries: 2, RequestID: "req_err_529"},
		wantRetries: []model.RetryInfo{
			{Attempt: 1, MaxRetries: 10, Delay: 500 * ms, Status: 529, Kind: "overloaded"},
			{Attempt: 2, MaxRetries: 10, Delay: 1000 * ms, Status: 529, Kind: "overloaded"},
		},
		wantDelays: []time.Duration{500 * ms, 1000 * ms},
	}, {
		name:     "401 gives up on the second",
		replies:  []reply{errorReply(401, "authentication_error", "invalid x-api-key")},
		wantReqs: 2,
		wantErr:  &model.APIError{Status: 401, Type: "authentication_error", Message: "invalid x-api-key", Retries: 1, RequestID: "req_err_401"},
		wantRetries: []model.RetryInfo{
			{Attempt: 1, MaxRetries: 10, Delay: 500 * ms, Status: 401, Kind: "authentication_failed"},
		},
		wantDelays: []time.Duration{500 * ms},
	}, {
		name:        "401 then success",
		replies:     []reply{errorReply(401, "authentication_error", "invalid x-api-key"), sseReply(helloStream())},
		wantReqs:    2,
		wantRetries: []model.RetryInfo{{Attempt: 1, MaxRetries: 10, Delay: 500 * ms, Status: 401, Kind: "authentication_failed"}},
		wantDelays:  []time.Duration{500 * ms},
	}, {
		name:        "429 with retry-after",
		replies:     []reply{errorReply(429, "rate_limit_error", "Slow down", "retry-after", "3"), sseReply(helloStream())},
		wantReqs:    2,
		wantRetries: []model.RetryInfo{{Attempt: 1, MaxRetries: 10, Delay: 3 * time.Second, Status: 429, Kind: "rate_limit"}},
		wantDelays:  []time.Duration{3 * time.Second},
	}, {
		name:     "400 is not retried",
		replies:  []reply{errorReply(400, "invalid_request_error", "max_tokens: too large")},
		wantReqs: 1,
		wantErr:  &model.APIError{Status: 400, Type: "invalid_request_error", Message: "max_tokens: too large", RequestID: "req_err_400"},
	}, {
		name:     "404 is not retried",
		replies:  []reply{errorReply(404, "not_found_error", "model: nope")},
		wantReqs: 1,
		wantErr:  &model.APIError{Status: 404, Type: "not_found_error", Message: "model: nope", RequestID: "req_err_404"},
	}, {
		name:       "MaxRetries caps server errors",
		replies:    []reply{errorReply(503, "api_error", "Unavailable")},
		maxRetries: intp(2),
		wantReqs:   3,
		wantErr:    &model.APIError{Status: 503, Type: "api_error", Message: "Unavailable", Retries: 2, RequestID: "req_err_503"},
		wantRetries: []model.RetryInfo{
			{Attempt: 1, MaxRetries: 2, Delay: 500 * ms, Status: 503, Kind: "server_error"},
			{Attempt: 2, MaxRetries: 2, Delay: 1000 * ms, Status: 503, Kind: "server_error"},
		},
		wantDelays: []time.Duration{500 * ms, 1000 * ms},
	}, {
		name: "error body that is not JSON",
		replies: []reply{func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte("forbidden by proxy\n"))
		}},
		wantReqs: 1,
		wantErr:  &model.APIError{Status: 403, Message: "forbidden by proxy"},
	}, {
		name: "bad JSON event retried as a connection error",
		replies: []reply{
			sseReply(ev("message_start", evStart) + ev("content_block_start", "{oops")),
			sseReply(helloStream()),
		},
		wantReqs:    2,
		wantRetries: []model.RetryInfo{{Attempt: 1, MaxRetries: 10, Delay: 500 * ms, Kind: "connection_error"}},
		wantDelays:  []time.Duration{500 * ms},
	}, {
		name: "stream error event retried silently",
		replies: []reply{
			sseReply(ev("message_start", evStart) + ev("error", `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)),
			sseReply(helloStream()),
		},
		wantReqs:   2,
		wantDelays: []time.Duration{500 * ms},
	}, {
		name:       "stream error events until retries run out",
		replies:    []reply{sseReply(ev("message_start", evStart) + ev("error", `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`))},
		maxRetries: intp(3),
		wantReqs:   4,
		wantErr:    &model.APIError{Type: "api_error", Message: "Internal server error", Retries: 3, RequestID: "req_1"},
		wantDelays: []time.Duration{500 * ms, 1000 * ms, 2000 * ms},
	}, {
		name:       "unreadable error event",
		replies:    []reply{sseReply(ev("error", "upstream timeout"))},
		maxRetries: intp(0),
		wantReqs:   1,
		wantErr:    &model.APIError{Type: "error", Message: "upstream timeout", RequestID: "req_1"},
	}, {
		name:       "overloaded stream errors count as 529s",
		replies:    []reply{sseReply(ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))},
		wantReqs:   3,
		wantErr:    &model.APIError{Type: "overloaded_error", Message: "Overloaded", Retries: 2, RequestID: "req_1"},
		wantDelays: []time.Duration{500 * ms, 1000 * ms},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, tt.replies...)
			p, sl := testProvider(t, f, func(o *Options) {
				if tt.maxRetries != nil {
					o.MaxRetries = tt.maxRetries
				}
			})
			h := &recorder{}
			resp, err := p.Stream(context.Background(), simpleRequest(), h)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Stream: %v", err)
				}
				if resp.Text() != "Hello world" {
					t.Errorf("reply %q", resp.Text())
				}
			} else {
				var got *model.APIError
				if !errors.As(err, &got) {
					t.Fatalf("Stream = %v, %v; want an *APIError", resp, err)
				}
				if resp != nil {
					t.Errorf("response %v with an error", resp)
				}
				if got.Endpoint == "" || !strings.Contains(f.URL, got.Endpoint) {
					t.Errorf("Endpoint = %q, want the host of %s", got.Endpoint, f.URL)
				}
				got.Endpoint = ""
				if diff := cmp.Diff(tt.wantErr, got); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			}
			if n := len(f.requests()); n != tt.wantReqs {
				t.Errorf("%d requests, want %d", n, tt.wantReqs)
			}
			if diff := cmp.Diff(tt.wantRetries, h.retries, ignoreRetryErr); diff != "" {
				t.Errorf("Retry calls (-want +got):\n%s", diff)
			}
			for _, r := range h.retries {
				if r.Err == nil {
					t.Errorf("retry %d has no Err", r.Attempt)
				}
			}
			if diff := cmp.Diff(tt.wantDelays, sl.delays); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryAfterZeroIgnored(t *testing.T) {
	for _, v := range []string{"0", "-1", "soon", "NaN", "1e10"} {
		if d := httpretry.After(http.Header{"Retry-After": {v}}); d != 0 {
			t.Errorf("retry-after %q = %v, want ignored", v, d)
		}
	}
	if d := httpretry.After(http.Header{"Retry-After": {"1.5"}}); d != 1500*time.Millisecond {
		t.Errorf("retry-after 1.5 = %v", d)
	}
}

func TestBackoffJitter(t *testing.T) {
	p := &Provider{jitter: func() float64 { return 0.999 }}
	for n, base := range map[int]time.Duration{0: 500 * time.Millisecond, 1: 500 * time.Millisecond, 3: 2 * time.Second, 7: 32 * time.Second, 8: 32 * time.Second, 1000: 32 * time.Second} {
		d := p.backoff(n, 0)
		if d < base || d > base+base/4 {
			t.Errorf("retry %d waits %v, want %v plus up to 25%%", n, d, base)
		}
	}
	if d := p.backoff(2, 3*time.Second); d != 3*time.Second {
		t.Errorf("retry-after wait %v, want 3s", d)
	}
}

func TestFailedUsageFromBrokenStreams(t *testing.T) {
	broken := ev("message_start", `{"type":"message_start","message":{"id":"msg_0","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":100,"cache_read_input_tokens":20,"output_tokens":1}}}`) +
		ev("content_block_start", textStart(0)) +
		ev("content_block_delta", textDelta(0, "Hel"))
	f := newFakeAPI(t,
		sseReply(broken+ev("error", `{"type":"error","error":{"type":"api_error","message":"boom"}}`)),
		sseReply(broken), // ends without message_stop
		errorReply(500, "api_error", "down"),
		sseReply(helloStream()),
	)
	p, sl := testProvider(t, f, nil)
	h := &recorder{}
	resp, err := p.Stream(context.Background(), simpleRequest(), h)
	if err != nil {
		t.Fatal(err)
	}
	want := model.Usage{InputTokens: 200, CacheReadInputTokens: 40, OutputTokens: 2}
	if diff := cmp.Diff(want, resp.FailedUsage); diff != "" {
		t.Errorf("FailedUsage (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(helloResponse().Usage, resp.Usage); diff != "" {
		t.Errorf("Usage (-want +got):\n%s", diff)
	}
	// The error event is retried without a Retry call; the others with one.
	wantRetries := []model.RetryInfo{
		{Attempt: 2, MaxRetries: 10, Delay: time.Second, Kind: "connection_error"},
		{Attempt: 3, MaxRetries: 10, Delay: 2 * time.Second, Status: 500, Kind: "server_error"},
	}
	if diff := cmp.Diff(wantRetries, h.retries, ignoreRetryErr); diff != "" {
		t.Errorf("Retry calls (-want +got):\n%s", diff)
	}
	if !errors.Is(h.retries[0].Err, model.ErrMalformedStream) {
		t.Errorf("retry of a cut stream has Err %v", h.retries[0].Err)
	}
	if len(sl.delays) != 3 {
		t.Errorf("waited %v, want three waits", sl.delays)
	}
	// The events of the failed attempts were passed on as they came.
	if n := len(h.events); n != 3+3+7 {
		t.Errorf("%d events, want 13", n)
	}
}

func TestConnectionErrors(t *testing.T) {
	f := newFakeAPI(t, sseReply(helloStream()))
	url := f.URL
	f.Close()
	p, sl := testProvider(t, f, func(o *Options) { o.BaseURL = url; o.MaxRetries = intp(2) })
	h := &recorder{}
	_, err := p.Stream(context.Background(), simpleRequest(), h)
	var ae *model.APIError
	if !errors.As(err, &ae) || ae.Status != 0 || ae.Err == nil || ae.Retries != 2 {
		t.Fatalf("Stream error %#v, want a connection APIError after 2 retries", err)
	}
	wantRetries := []model.RetryInfo{
		{Attempt: 1, MaxRetries: 2, Delay: 500 * time.Millisecond, Kind: "connection_error"},
		{Attempt: 2, MaxRetries: 2, Delay: time.Second, Kind: "connection_error"},
	}
	if diff := cmp.Diff(wantRetries, h.retries, ignoreRetryErr); diff != "" {
		t.Errorf("Retry calls (-want +got):\n%s", diff)
	}
	if len(sl.delays) != 2 {
		t.Errorf("waits %v", sl.delays)
	}
}

func TestCancelDuringRetryWait(t *testing.T) {
	f := newFakeAPI(t, errorReply(500, "api_error", "down"))
	// The real sleep: the first wait is 500ms, cancelled at once.
	p, _ := testProvider(t, f, func(o *Options) { o.Sleep = nil })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &recorder{onRetry: func(model.RetryInfo) { cancel() }}
	begin := time.Now()
	resp, err := p.Stream(ctx, simpleRequest(), h)
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream = %v, %v; want context.Canceled", resp, err)
	}
	if d := time.Since(begin); d > 400*time.Millisecond {
		t.Errorf("cancelled wait took %v", d)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests after cancel, want 1", n)
	}
}

func TestCancelDuringStream(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(ev("message_start", evStart) + ev("content_block_start", textStart(0))))
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		case <-time.After(10 * time.Second):
		}
	})
	p, sl := testProvider(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &recorder{onEvent: func(e model.StreamEvent) {
		if e.Type == "content_block_start" {
			cancel()
		}
	}}
	begin := time.Now()
	resp, err := p.Stream(ctx, simpleRequest(), h)
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream = %v, %v; want context.Canceled", resp, err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("cancelled stream took %v", d)
	}
	if len(h.retries) != 0 || len(sl.delays) != 0 {
		t.Errorf("retried after cancel: %v %v", h.retries, sl.delays)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	f := newFakeAPI(t, sseReply(helloStream()))
	p, _ := testProvider(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Stream(ctx, simpleRequest(), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream error %v, want context.Canceled", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests with a cancelled context", n)
	}
}

func TestConcurrentStreams(t *testing.T) {
	f := newFakeAPI(t, sseReply(helloStream()))
	p, _ := testProvider(t, f, nil)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			resp, err := p.Stream(context.Background(), simpleRequest(), &recorder{})
			if err == nil && resp.Text() != "Hello world" {
				err = errors.New("wrong reply " + resp.Text())
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
