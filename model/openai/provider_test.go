package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentloop/agentloop/model"
)

// recorder is a model.Handler that writes down every call, in order.
type recorder struct {
	mu      sync.Mutex
	log     []string
	events  []model.StreamEvent
	blocks  []model.Content
	retries []model.RetryInfo
}

func (r *recorder) Event(ev model.StreamEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	r.log = append(r.log, "event "+ev.Type)
}

func (r *recorder) Block(i int, c model.Content, start *model.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.blocks = append(r.blocks, c)
	r.log = append(r.log, fmt.Sprintf("block %d %s (%d done)", i, c.Type, len(start.Content)))
}

func (r *recorder) Retry(ri model.RetryInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retries = append(r.retries, ri)
	r.log = append(r.log, fmt.Sprintf("retry %d", ri.Attempt))
}

// testProvider returns a provider on f that records its sleeps instead of
// sleeping.
func testProvider(t *testing.T, f *FakeServer, edit func(*Options)) (*Provider, *[]time.Duration) {
	t.Helper()
	var slept []time.Duration
	var mu sync.Mutex
	o := &Options{
		APIKey:  "sk-test",
		BaseURL: f.BaseURL(),
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			slept = append(slept, d)
			mu.Unlock()
			return ctx.Err()
		},
		Jitter: func() float64 { return 0 },
	}
	if edit != nil {
		edit(o)
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p, &slept
}

func userText(s string) *model.Request {
	return &model.Request{Model: "claude-sonnet-4-5", MaxTokens: 100,
		Messages: []model.Message{{Role: "user", Content: []model.Content{model.TextBlock(s)}}}}
}

// jsonValue decodes b for comparison.
func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// TestRequestTranslation: every kind of block and field reaches the wire
// in its Chat Completions form, and what cannot be expressed is dropped.
func TestRequestTranslation(t *testing.T) {
	yes := true
	req := &model.Request{
		Model:  "claude-opus-4-5",
		System: []model.Content{model.TextBlock("You are agentloop."), model.TextBlock("Be brief.")},
		Messages: []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock("<reminder>r</reminder>"), model.TextBlock("Look at this"),
				{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "iVBORw0K"}}}},
			{Role: "assistant", Content: []model.Content{
				{Type: model.TypeThinking, Thinking: "private", Signature: "sig"},
				model.TextBlock("Reading both."),
				{Type: model.TypeToolUse, ID: "call_a", Name: "Read", Input: json.RawMessage(`{"file_path":"/a"}`)},
				{Type: model.TypeToolUse, ID: "call_b", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
			}},
			{Role: "user", Content: []model.Content{
				{Type: model.TypeToolResult, ToolUseID: "call_a", Text: "contents of a"},
				{Type: model.TypeToolResult, ToolUseID: "call_b", IsError: &yes, Blocks: []model.Content{model.TextBlock("permission denied")}},
				model.TextBlock("go on"),
			}},
			{Role: "assistant", Content: []model.Content{{Type: model.TypeThinking, Thinking: "only thinking"}}},
		},
		Tools: []model.ToolDef{
			{Name: "Read", Description: "Reads a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)},
			{Name: "Noop"},
			{Name: "web_search", Type: "web_search_20250305"},
		},
		MaxTokens: 32000,
		Thinking:  &model.Thinking{Type: "adaptive"},
		Output:    &model.OutputConfig{Effort: "max"},
	}
	want := `{
	  "model": "gpt-test",
	  "messages": [
	    {"role": "system", "content": "You are agentloop.\n\nBe brief."},
	    {"role": "user", "content": [
	      {"type": "text", "text": "<reminder>r</reminder>"},
	      {"type": "text", "text": "Look at this"},
	      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}}]},
	    {"role": "assistant", "content": "Reading both.", "tool_calls": [
	      {"id": "call_a", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"/a\"}"}},
	      {"id": "call_b", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}}]},
	    {"role": "tool", "tool_call_id": "call_a", "content": "contents of a"},
	    {"role": "tool", "tool_call_id": "call_b", "content": "[tool error] permission denied"},
	    {"role": "user", "content": "go on"}
	  ],
	  "tools": [
	    {"type": "function", "function": {"name": "Read", "description": "Reads a file.",
	      "parameters": {"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}},
	    {"type": "function", "function": {"name": "Noop", "parameters": {"type":"object","properties":{}}}}
	  ],
	  "max_completion_tokens": 32000,
	  "reasoning_effort": "xhigh",
	  "stream": true,
	  "stream_options": {"include_usage": true}
	}`
	f := NewFakeServer(t, TextReply("ok"))
	p, _ := testProvider(t, f, func(o *Options) { o.Model = "gpt-test" })
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := f.Requests()[0]
	if d := cmp.Diff(jsonValue(t, []byte(want)), jsonValue(t, got.Raw)); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
	for k, v := range map[string]string{"Authorization": "Bearer sk-test", "User-Agent": "agentloop/" + Version, "Accept": "text/event-stream"} {
		if g := got.Header.Get(k); g != v {
			t.Errorf("header %s = %q, want %q", k, g, v)
		}
	}
}

// TestRequestOptions: LegacyMaxTokens, NoReasoningEffort, ModelMap, extra
// headers, and no Authorization header without a key.
func TestRequestOptions(t *testing.T) {
	t.Setenv(EnvAPIKey, "")
	t.Setenv("OPENAI_ADMIN_KEY", "sk-admin")
	f := NewFakeServer(t, TextReply("a"), TextReply("b"))
	p, _ := testProvider(t, f, func(o *Options) {
		o.APIKey, o.LegacyMaxTokens, o.NoReasoningEffort = "", true, true
		o.Model, o.ModelMap = "big", map[string]string{"claude-haiku-4-5": "small"}
		o.Headers = map[string]string{"X-Extra": "1"}
	})
	req := userText("hi")
	req.Output = &model.OutputConfig{Effort: "low"}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	req.Model = "claude-haiku-4-5"
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	rs := f.Requests()
	var first map[string]any
	_ = json.Unmarshal(rs[0].Raw, &first)
	if first["max_tokens"] != 100.0 || first["max_completion_tokens"] != nil || first["reasoning_effort"] != nil {
		t.Errorf("body %s: want max_tokens 100, no max_completion_tokens, no reasoning_effort", rs[0].Raw)
	}
	if rs[0].Body.Model != "big" || rs[1].Body.Model != "small" {
		t.Errorf("models %q, %q; want big (Options.Model), small (ModelMap)", rs[0].Body.Model, rs[1].Body.Model)
	}
	if a := rs[0].Header.Get("Authorization"); a != "" {
		t.Errorf("Authorization %q sent without a key", a)
	}
	if rs[0].Header.Get("X-Extra") != "1" {
		t.Error("extra header missing")
	}
}

// TestStreamTextEvents: text deltas become the Messages API's event
// sequence, the block is reported before its stop, and the reply carries
// the text, stop reason and usage.
func TestStreamTextEvents(t *testing.T) {
	f := NewFakeServer(t, TextReply("Hel", "lo"))
	p, _ := testProvider(t, f, nil)
	var h recorder
	resp, err := p.Stream(context.Background(), userText("hi"), &h)
	if err != nil {
		t.Fatal(err)
	}
	wantLog := []string{
		"event message_start", "event content_block_start", "event content_block_delta", "event content_block_delta",
		"block 0 text (1 done)", "event content_block_stop", "event message_delta", "event message_stop",
	}
	if d := cmp.Diff(wantLog, h.log); d != "" {
		t.Errorf("handler calls (-want +got):\n%s", d)
	}
	wantData := []string{
		`{"message":{"content":[],"id":"chatcmpl-fake","model":"fake-model","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"type":"message_start"}`,
		`{"content_block":{"text":"","type":"text"},"index":0,"type":"content_block_start"}`,
		`{"delta":{"text":"Hel","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"text":"lo","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`{"index":0,"type":"content_block_stop"}`,
		`{"delta":{"stop_reason":"end_turn","stop_sequence":null},"type":"message_delta","usage":{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}`,
		`{"type":"message_stop"}`,
	}
	var gotData []string
	for _, ev := range h.events {
		gotData = append(gotData, string(ev.Data))
		if !json.Valid(ev.Data) {
			t.Errorf("event %s: invalid JSON", ev.Type)
		}
	}
	if d := cmp.Diff(wantData, gotData); d != "" {
		t.Errorf("event data (-want +got):\n%s", d)
	}
	want := &model.Response{ID: "chatcmpl-fake", Type: "message", Role: "assistant", Model: "fake-model",
		Content: []model.Content{model.TextBlock("Hello")}, StopReason: "end_turn",
		Usage: model.Usage{InputTokens: 10, OutputTokens: 5}}
	if d := cmp.Diff(want, resp, cmpopts.IgnoreFields(model.Response{}, "Duration", "TTFT")); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
}

// TestStreamParallelToolCalls: two tool calls whose deltas interleave by
// index come back as two complete tool_use blocks in index order, ids kept,
// after the text; the stop reason is tool_use.
func TestStreamParallelToolCalls(t *testing.T) {
	f := NewFakeServer(t, FakeReply{Chunks: []string{
		TextChunk("Both."),
		ToolChunk(0, "call_a", "Read", ""),
		ToolChunk(1, "call_b", "Bash", `{"comm`),
		ToolChunk(0, "", "", `{"file_path":`),
		ToolChunk(1, "", "", `and":"ls"}`),
		ToolChunk(0, "", "", `"/a"}`),
		FinishChunk("tool_calls"),
		UsageChunk(20, 7, 0),
	}})
	p, _ := testProvider(t, f, nil)
	var h recorder
	resp, err := p.Stream(context.Background(), userText("hi"), &h)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Content{
		model.TextBlock("Both."),
		{Type: model.TypeToolUse, ID: "call_a", Name: "Read", Input: json.RawMessage(`{"file_path":"/a"}`)},
		{Type: model.TypeToolUse, ID: "call_b", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
	}
	if d := cmp.Diff(want, resp.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, h.blocks); d != "" {
		t.Errorf("blocks reported (-want +got):\n%s", d)
	}
	if resp.StopReason != "tool_use" {
		t.Errorf("stop reason %q, want tool_use", resp.StopReason)
	}
	wantLog := []string{
		"event message_start", "event content_block_start", "event content_block_delta", "block 0 text (1 done)", "event content_block_stop",
		"event content_block_start", "event content_block_delta", "block 1 tool_use (2 done)", "event content_block_stop",
		"event content_block_start", "event content_block_delta", "block 2 tool_use (3 done)", "event content_block_stop",
		"event message_delta", "event message_stop",
	}
	if d := cmp.Diff(wantLog, h.log); d != "" {
		t.Errorf("handler calls (-want +got):\n%s", d)
	}
}

// TestStreamStopAndUsage: finish reasons map to stop reasons, and cached
// prompt tokens are cache reads, not input.
func TestStreamStopAndUsage(t *testing.T) {
	for _, tc := range []struct {
		finish string
		tools  bool
		want   string
	}{
		{"stop", false, "end_turn"},
		{"length", false, "max_tokens"},
		{"content_filter", false, "refusal"},
		{"tool_calls", true, "tool_use"},
		{"stop", true, "tool_use"}, // servers that say stop with tool calls
	} {
		t.Run(tc.finish, func(t *testing.T) {
			chunks := []string{TextChunk("x")}
			if tc.tools {
				chunks = append(chunks, ToolChunk(0, "call_1", "Read", `{}`))
			}
			chunks = append(chunks, FinishChunk(tc.finish), UsageChunk(1000, 50, 800))
			f := NewFakeServer(t, FakeReply{Chunks: chunks})
			p, _ := testProvider(t, f, nil)
			resp, err := p.Stream(context.Background(), userText("hi"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != tc.want {
				t.Errorf("stop reason %q, want %q", resp.StopReason, tc.want)
			}
			want := model.Usage{InputTokens: 200, CacheReadInputTokens: 800, OutputTokens: 50}
			if d := cmp.Diff(want, resp.Usage); d != "" {
				t.Errorf("usage (-want +got):\n%s", d)
			}
		})
	}
}

// TestStreamReasoning: reasoning_content (vLLM, DeepSeek) and reasoning
// (ollama, OpenRouter) deltas become a thinking block before the text.
func TestStreamReasoning(t *testing.T) {
	reasoning := chunkJSON(map[string]any{"reasoning": " more"}, nil)
	f := NewFakeServer(t, FakeReply{Chunks: []string{ReasoningChunk("Let me"), reasoning, TextChunk("Answer"), FinishChunk("stop")}})
	p, _ := testProvider(t, f, nil)
	var h recorder
	resp, err := p.Stream(context.Background(), userText("hi"), &h)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Content{{Type: model.TypeThinking, Thinking: "Let me more"}, model.TextBlock("Answer")}
	if d := cmp.Diff(want, resp.Content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
	var deltas []string
	for _, ev := range h.events {
		if ev.Type == "content_block_delta" || ev.Type == "content_block_start" {
			deltas = append(deltas, string(ev.Data))
		}
	}
	if !strings.Contains(deltas[0], `"type":"thinking"`) || !strings.Contains(deltas[1], `"thinking_delta"`) {
		t.Errorf("thinking events: %v", deltas)
	}
}

// TestRetryRateLimit: a 429 with retry-after is retried after that long,
// announced through Handler.Retry; the SDK does not retry on its own.
func TestRetryRateLimit(t *testing.T) {
	f := NewFakeServer(t,
		FakeReply{Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: `{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`},
		FakeReply{Status: 503, Body: `{"error":"loading model"}`},
		TextReply("ok"))
	p, slept := testProvider(t, f, nil)
	var h recorder
	resp, err := p.Stream(context.Background(), userText("hi"), &h)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "ok" || len(f.Requests()) != 3 {
		t.Fatalf("text %q after %d requests, want ok after 3", resp.Text(), len(f.Requests()))
	}
	want := []model.RetryInfo{
		{Attempt: 1, MaxRetries: DefaultMaxRetries, Delay: 2 * time.Second, Status: 429, Kind: "rate_limit"},
		{Attempt: 2, MaxRetries: DefaultMaxRetries, Delay: time.Second, Status: 503, Kind: "server_error"},
	}
	if d := cmp.Diff(want, h.retries, cmpopts.IgnoreFields(model.RetryInfo{}, "Err")); d != "" {
		t.Errorf("retries (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]time.Duration{2 * time.Second, time.Second}, *slept); d != "" {
		t.Errorf("sleeps (-want +got):\n%s", d)
	}
	var ae *model.APIError
	if len(h.retries) == 0 || !errors.As(h.retries[0].Err, &ae) || !strings.Contains(ae.Message, "slow down") {
		t.Errorf("retry error %v, want the API's message", h.retries[0].Err)
	}
}

// TestErrorsNotRetried: 400, 401, 403, 404 and insufficient_quota fail at
// once with an APIError of the shared Kind vocabulary.
func TestErrorsNotRetried(t *testing.T) {
	for _, tc := range []struct {
		status   int
		body     string
		kind     string
		contains string
	}{
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, "authentication_failed", "Incorrect API key"},
		{400, `{"error":{"message":"bad tools","type":"invalid_request_error","code":null}}`, "invalid_request", "bad tools"},
		{403, `{"error":{"message":"region","type":"permission"}}`, "unknown", "region"},
		{404, `{"error":"model 'x' not found"}`, "model_not_found", "model 'x' not found"},
		{429, `{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}`, "billing_error", "insufficient_quota"},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			f := NewFakeServer(t, FakeReply{Status: tc.status, Body: tc.body, Header: map[string]string{"X-Request-Id": "req_1"}})
			p, slept := testProvider(t, f, nil)
			var h recorder
			_, err := p.Stream(context.Background(), userText("hi"), &h)
			var ae *model.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v, want *model.APIError", err)
			}
			if ae.Kind() != tc.kind || ae.Status != tc.status || ae.Retries != 0 || ae.RequestID != "req_1" || !strings.Contains(ae.Message, tc.contains) {
				t.Errorf("APIError %+v (kind %s), want status %d kind %s, message with %q", ae, ae.Kind(), tc.status, tc.kind, tc.contains)
			}
			if len(f.Requests()) != 1 || len(h.retries) != 0 || len(*slept) != 0 {
				t.Errorf("%d requests, %d retries: want no retry", len(f.Requests()), len(h.retries))
			}
		})
	}
}

// TestRetriesRunOut: MaxRetries bounds the retries; the final error counts
// them and names the endpoint.
func TestRetriesRunOut(t *testing.T) {
	f := NewFakeServer(t, FakeReply{Status: 500, Body: `{}`}, FakeReply{Status: 500, Body: `{}`}, FakeReply{Status: 500, Body: `{}`})
	p, slept := testProvider(t, f, func(o *Options) { two := 2; o.MaxRetries = &two })
	_, err := p.Stream(context.Background(), userText("hi"), nil)
	var ae *model.APIError
	if !errors.As(err, &ae) || ae.Retries != 2 || ae.Kind() != "server_error" || ae.Endpoint == "" {
		t.Fatalf("error %#v, want a server_error after 2 retries", err)
	}
	if d := cmp.Diff([]time.Duration{500 * time.Millisecond, time.Second}, *slept); d != "" {
		t.Errorf("backoff (-want +got):\n%s", d)
	}
}

// TestMalformedChunk: a chunk that is not JSON ends the attempt with an
// error wrapping model.ErrMalformedStream that says where; a stream error
// object is retried and then reported with its message.
func TestMalformedChunk(t *testing.T) {
	zero := 0
	f := NewFakeServer(t, FakeReply{Chunks: []string{TextChunk("a"), `{"choices":[{"delta":`}})
	p, _ := testProvider(t, f, func(o *Options) { o.MaxRetries = &zero })
	_, err := p.Stream(context.Background(), userText("hi"), nil)
	if !errors.Is(err, model.ErrMalformedStream) || !strings.Contains(err.Error(), "event 2: invalid JSON chunk") {
		t.Errorf("error %v, want a malformed stream naming event 2", err)
	}

	f = NewFakeServer(t,
		FakeReply{Chunks: []string{TextChunk("a"), `{"error":{"message":"model crashed","type":"server_error"}}`}, NoDone: true},
		TextReply("ok"))
	p, _ = testProvider(t, f, nil)
	var h recorder
	resp, err := p.Stream(context.Background(), userText("hi"), &h)
	if err != nil || resp.Text() != "ok" {
		t.Fatalf("got %v, %v; want the retry to succeed", resp, err)
	}
	if len(h.retries) != 0 {
		t.Errorf("a stream error was announced: %+v", h.retries)
	}

	f = NewFakeServer(t, FakeReply{Chunks: []string{TextChunk("a")}, NoDone: true})
	p, _ = testProvider(t, f, func(o *Options) { o.MaxRetries = &zero })
	_, err = p.Stream(context.Background(), userText("hi"), nil)
	if !errors.Is(err, model.ErrMalformedStream) || !strings.Contains(err.Error(), "without a finish_reason") {
		t.Errorf("truncated stream: error %v", err)
	}
}

// TestIdleTimeout: a stream that falls silent is cut after
// StreamIdleTimeout with a TimeoutError.
func TestIdleTimeout(t *testing.T) {
	zero := 0
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprintf(w, "data: %s\n\n", TextChunk("a"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	p, err := New(&Options{BaseURL: srv.URL, MaxRetries: &zero, StreamIdleTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err = p.Stream(ctx, userText("hi"), nil)
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Stream took %v", el)
	}
	var te *TimeoutError
	if !errors.As(err, &te) || te.Which != "idle" {
		t.Fatalf("error %v, want an idle TimeoutError", err)
	}
}

// TestCancel: cancelling ctx during a retry wait ends Stream with ctx's
// error.
func TestCancel(t *testing.T) {
	f := NewFakeServer(t, FakeReply{Status: 500, Body: `{}`})
	ctx, cancel := context.WithCancel(context.Background())
	p, _ := testProvider(t, f, func(o *Options) {
		o.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
	})
	_, err := p.Stream(ctx, userText("hi"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}

	// Mid-stream: the server has sent a delta and then nothing.
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprintf(w, "data: %s\n\n", TextChunk("a"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	ctx, cancel = context.WithCancel(context.Background())
	p, err = New(&Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	h := cancelOnDelta{cancel: cancel}
	start := time.Now()
	_, err = p.Stream(ctx, userText("hi"), h)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("error %v after %v, want context.Canceled at once", err, time.Since(start))
	}
}

// cancelOnDelta cancels its context on the first content delta.
type cancelOnDelta struct {
	model.NopHandler
	cancel context.CancelFunc
}

func (c cancelOnDelta) Event(ev model.StreamEvent) {
	if ev.Type == "content_block_delta" {
		c.cancel()
	}
}

func TestNewBadBaseURL(t *testing.T) {
	if _, err := New(&Options{BaseURL: "localhost:11434"}); err == nil {
		t.Error("New accepted a base URL without a scheme")
	}
}

// TestConcurrentStreams: one provider serves parallel calls (subagents
// share their parent's); run with -race.
func TestConcurrentStreams(t *testing.T) {
	const n = 8
	var replies []FakeReply
	for i := 0; i < n; i++ {
		replies = append(replies, TextReply("same"))
	}
	f := NewFakeServer(t, replies...)
	p, _ := testProvider(t, f, nil)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := p.Stream(context.Background(), userText("hi"), &recorder{})
			if err == nil && resp.Text() != "same" {
				err = fmt.Errorf("text %q", resp.Text())
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestEffortRejected: a model that rejects reasoning_effort gets the
// request again at once without it, and later requests for that model
// leave it out.
func TestEffortRejected(t *testing.T) {
	f := NewFakeServer(t,
		FakeReply{Status: 400, Body: `{"error":{"message":"Unrecognized request argument supplied: reasoning_effort","type":"invalid_request_error"}}`},
		TextReply("a"), TextReply("b"))
	p, slept := testProvider(t, f, nil)
	req := userText("hi")
	req.Output = &model.OutputConfig{Effort: "high"}
	var h recorder
	for i := 0; i < 2; i++ {
		if _, err := p.Stream(context.Background(), req, &h); err != nil {
			t.Fatal(err)
		}
	}
	var sent []string
	for _, r := range f.Requests() {
		sent = append(sent, r.Body.ReasoningEffort)
	}
	if d := cmp.Diff([]string{"high", "", ""}, sent); d != "" {
		t.Errorf("reasoning_effort sent (-want +got):\n%s", d)
	}
	if len(h.retries) != 0 || len(*slept) != 0 {
		t.Errorf("the resend waited or was announced: %v", h.retries)
	}
}

// TestNonStreamedCompletion: a server that ignores "stream" and answers
// with one chat.completion object is read as a reply streamed in one
// piece; another content type is a malformed stream.
func TestNonStreamedCompletion(t *testing.T) {
	zero := 0
	body := `{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
	  "message":{"role":"assistant","content":"Checking.","reasoning_content":"think",
	    "tool_calls":[{"id":"call_1","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"/a\"}"}}]}}],
	  "usage":{"prompt_tokens":9,"completion_tokens":4}}`
	jsonType := map[string]string{"Content-Type": "application/json"}
	f := NewFakeServer(t, FakeReply{Header: jsonType, Raw: body},
		FakeReply{Header: map[string]string{"Content-Type": "text/html"}, Raw: "<html>"})
	p, _ := testProvider(t, f, func(o *Options) { o.MaxRetries = &zero })
	var h recorder
	resp, err := p.Stream(context.Background(), userText("hi"), &h)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Content{{Type: model.TypeThinking, Thinking: "think"}, model.TextBlock("Checking."),
		{Type: model.TypeToolUse, ID: "call_1", Name: "Read", Input: json.RawMessage(`{"file_path":"/a"}`)}}
	if d := cmp.Diff(want, resp.Content); d != "" || resp.StopReason != "tool_use" || resp.Usage.InputTokens != 9 || len(h.blocks) != 3 {
		t.Errorf("reply %+v (content -want +got:\n%s)", resp, d)
	}
	_, err = p.Stream(context.Background(), userText("hi"), nil)
	if !errors.Is(err, model.ErrMalformedStream) || !strings.Contains(err.Error(), "text/html") {
		t.Errorf("html answer: %v", err)
	}
}
