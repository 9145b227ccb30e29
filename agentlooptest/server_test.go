package agentlooptest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
)

func TestNonStreaming(t *testing.T) {
	r := agentlooptest.Blocks(
		agentlooptest.ThinkingBlock("hmm", "sig"),
		model.TextBlock("Reading."),
		agentlooptest.ToolUseBlock("toolu_1", "Read", map[string]string{"file_path": "/a"}),
	)
	r.ID, r.Model = "msg_1", "claude-other"
	r.Header = map[string]string{"anthropic-organization-id": "org"}
	s := agentlooptest.NewTB(t, r)
	resp := post(t, s.URL+"/v1/messages", request(false, "hi"))
	body := readAll(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("anthropic-organization-id") != "org" {
		t.Errorf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	want := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-other","content":[
		{"type":"thinking","thinking":"hmm","signature":"sig"},
		{"type":"text","text":"Reading."},
		{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a"}}],
		"stop_reason":"tool_use","stop_sequence":null,
		"usage":{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}`
	if diff := cmp.Diff(decode(t, []byte(want)), decode(t, body)); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

func TestHTTPErrors(t *testing.T) {
	withRetryAfter := agentlooptest.Error(429, "", "")
	withRetryAfter.Header = map[string]string{"retry-after": "2"}
	tests := []struct {
		name       string
		reply      agentlooptest.Reply
		stream     bool
		wantStatus int
		wantType   string
		wantMsg    string
		wantHeader map[string]string
	}{
		{"overloaded", agentlooptest.Overloaded(), true, 529, "overloaded_error", "Overloaded", nil},
		{"server error", agentlooptest.ServerError(), false, 500, "api_error", "Internal server error", nil},
		{"rate limited with retry-after", withRetryAfter, true, 429, "rate_limit_error", "Rate limited", map[string]string{"retry-after": "2"}},
		{"custom", agentlooptest.Error(401, "authentication_error", "bad key"), true, 401, "authentication_error", "bad key", nil},
		{"default type for 418", agentlooptest.Error(418, "", "teapot"), true, 418, "invalid_request_error", "teapot", nil},
		{"stream error on a non-streaming request", agentlooptest.ErrorEvent("overloaded_error", ""), false, 529, "overloaded_error", "Overloaded", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := agentlooptest.NewTB(t, tt.reply, agentlooptest.Text("after"))
			resp := post(t, s.URL+"/v1/messages", request(tt.stream, "hi"))
			body := readAll(t, resp)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			reqID := resp.Header.Get("request-id")
			if !strings.HasPrefix(reqID, "req_fake_") || reqID != s.LastRequest().RequestID {
				t.Errorf("request-id header %q, recorded %q", reqID, s.LastRequest().RequestID)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content-type %q", ct)
			}
			for k, v := range tt.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s: %q, want %q", k, got, v)
				}
			}
			want := map[string]any{
				"type":       "error",
				"error":      map[string]any{"type": tt.wantType, "message": tt.wantMsg},
				"request_id": reqID,
			}
			if diff := cmp.Diff(any(want), decode(t, body)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			// The error consumed its entry; the next request gets the next one.
			resp = post(t, s.URL+"/v1/messages", request(false, "again"))
			if b := readAll(t, resp); !strings.Contains(string(b), `"after"`) {
				t.Errorf("second answer %s", b)
			}
		})
	}
}

func TestRecording(t *testing.T) {
	s := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"))
	body := `{
		"model": "claude-test", "max_tokens": 2048, "stream": true,
		"system": [{"type":"text","text":"You are a test."},{"type":"text","text":"Be brief."}],
		"tools": [{"name":"Read","input_schema":{"type":"object"}},{"name":"web_search","type":"web_search_20250305","max_uses":3}],
		"thinking": {"type":"adaptive"},
		"output_config": {"effort":"high"},
		"metadata": {"user_id":"u1"},
		"context_management": {"edits":[]},
		"messages": [
			{"role":"user","content":"read /a"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/a"}},
			                               {"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"/b"}}]},
			{"role":"user","content":[
				{"type":"tool_result","tool_use_id":"toolu_1","content":"hello"},
				{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"no such file"}],"is_error":true},
				{"type":"text","text":"and then?","cache_control":{"type":"ephemeral"}}]}
		]}`
	resp := post(t, s.URL+"/v1/messages?beta=true", body,
		"anthropic-beta", "claude-code-20250219, interleaved-thinking-2025-05-14", "anthropic-beta", "effort-2025-11-24", "x-api-key", "sk-test")
	if _, err := readSSE(resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	readAll(t, post(t, s.URL+"/v1/messages", `{"model":"m","max_tokens":1,"system":"plain system","messages":[{"role":"user","content":"second"}]}`))

	if s.Len() != 2 || len(s.Requests()) != 2 || s.Remaining() != 0 {
		t.Fatalf("Len %d, Requests %d, Remaining %d", s.Len(), len(s.Requests()), s.Remaining())
	}
	r := s.Requests()[0]
	if r.Method != "POST" || r.Path != "/v1/messages" || r.RawQuery != "beta=true" || r.Kind != agentlooptest.KindMain {
		t.Errorf("method %q path %q query %q kind %q", r.Method, r.Path, r.RawQuery, r.Kind)
	}
	if r.Header.Get("x-api-key") != "sk-test" || string(r.Body) != body {
		t.Errorf("header or body not recorded")
	}
	if time.Since(r.At) > time.Minute || r.At.IsZero() {
		t.Errorf("At %v", r.At)
	}
	if r.Reply == nil || r.Reply.Content[0].Text != "one" || !strings.HasPrefix(r.Reply.ID, "msg_fake_") || r.Reply.Model != "claude-test" || r.Reply.StopReason != "end_turn" {
		t.Errorf("recorded reply %+v", r.Reply)
	}
	p := r.Params
	if p.Model != "claude-test" || p.MaxTokens != 2048 || !p.Stream || p.Thinking.Type != "adaptive" || p.Output.Effort != "high" || p.Metadata.UserID != "u1" {
		t.Errorf("params %+v", p)
	}
	if diff := cmp.Diff([]string{"claude-code-20250219", "interleaved-thinking-2025-05-14", "effort-2025-11-24"}, p.Betas); diff != "" {
		t.Errorf("betas (-want +got):\n%s", diff)
	}
	if got := r.SystemText(); got != "You are a test.\nBe brief." {
		t.Errorf("SystemText %q", got)
	}
	if diff := cmp.Diff([]string{"Read", "web_search"}, r.ToolNames()); diff != "" {
		t.Errorf("ToolNames (-want +got):\n%s", diff)
	}
	if got := r.LastUserText(); got != "and then?" {
		t.Errorf("LastUserText %q", got)
	}
	if !r.HasCacheControlOnLastBlock() || !r.IsMain() {
		t.Errorf("HasCacheControlOnLastBlock %v IsMain %v", r.HasCacheControlOnLastBlock(), r.IsMain())
	}
	if got := string(r.Field("context_management")); got != `{"edits":[]}` {
		t.Errorf("Field %q", got)
	}
	isErr := true
	wantResults := []model.Content{
		{Type: "tool_result", ToolUseID: "toolu_1", Text: "hello"},
		{Type: "tool_result", ToolUseID: "toolu_2", Blocks: []model.Content{model.TextBlock("no such file")}, IsError: &isErr},
	}
	if diff := cmp.Diff(wantResults, r.ToolResults()); diff != "" {
		t.Errorf("ToolResults (-want +got):\n%s", diff)
	}
	if res, ok := r.ToolResult("toolu_2"); !ok || res.ResultText() != "no such file" {
		t.Errorf("ToolResult(toolu_2) = %+v, %v", res, ok)
	}
	if _, ok := r.ToolResult("toolu_9"); ok {
		t.Errorf("ToolResult(toolu_9) found")
	}

	r2 := s.LastRequest()
	if r2 != s.Requests()[1] || r2.Params.Stream {
		t.Errorf("LastRequest is not the second request")
	}
	// Shorthand strings become text blocks.
	if r2.SystemText() != "plain system" || r2.LastUserText() != "second" || r2.IsMain() || r2.ToolResults() != nil {
		t.Errorf("second request: system %q, user %q", r2.SystemText(), r2.LastUserText())
	}
	if s.AllRequests()[1] != r2 {
		t.Errorf("AllRequests differs")
	}
}

func TestRequestHelpersOnNil(t *testing.T) {
	s := agentlooptest.NewTB(t)
	r := s.LastRequest()
	if r != nil || r.LastUserText() != "" || r.ToolResults() != nil || r.ToolNames() != nil || r.HasCacheControlOnLastBlock() || r.IsMain() || r.Field("x") != nil {
		t.Errorf("helpers on a nil request")
	}
}

func TestIsMain(t *testing.T) {
	cc := &model.CacheControl{Type: "ephemeral"}
	tools := []model.ToolDef{{Name: "Read"}}
	user := func(blocks ...model.Content) model.Message { return model.Message{Role: "user", Content: blocks} }
	marked := func(s string) model.Content { c := model.TextBlock(s); c.CacheControl = cc; return c }
	tests := []struct {
		name string
		p    model.Request
		want bool
	}{
		{"no tools", model.Request{Messages: []model.Message{user(marked("hi"))}}, false},
		{"tools, breakpoint on last", model.Request{Tools: tools, Messages: []model.Message{user(marked("hi"))}}, true},
		{"tools, no breakpoints", model.Request{Tools: tools, Messages: []model.Message{user(model.TextBlock("hi"))}}, true},
		{"fork: breakpoint on an earlier message", model.Request{Tools: tools, Messages: []model.Message{
			user(marked("hi")), {Role: "assistant", Content: []model.Content{model.TextBlock("yo")}}, user(model.TextBlock("summarize"))}}, false},
		{"suggestion marker", model.Request{Tools: tools, Messages: []model.Message{user(marked("  [SUGGESTION MODE: x]"))}}, false},
	}
	for _, tt := range tests {
		r := &agentlooptest.Request{Params: tt.p}
		if got := r.IsMain(); got != tt.want {
			t.Errorf("%s: IsMain = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestInvalidRequests(t *testing.T) {
	tests := []struct {
		name, body, wantMsg string
		wantStatus          int
	}{
		{"not JSON", `{"model": `, "request body is not a JSON object", 400},
		{"not an object", `[1,2]`, "request body is not a JSON object", 400},
		{"empty", ``, "request body is not a JSON object", 400},
		{"no model", `{"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, "model: Field required", 400},
		{"no messages", `{"model":"m","max_tokens":1}`, "messages: Field required", 400},
		{"empty messages", `{"model":"m","max_tokens":1,"messages":[]}`, "messages: at least one message is required", 400},
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, "max_tokens: Field required (must be at least 1)", 400},
		{"bad role", `{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"x"}]}`, "messages.0.role: Input should be 'user' or 'assistant'", 400},
		{"messages not a list", `{"model":"m","max_tokens":1,"messages":"hi"}`, "", 400},
		{"block without type", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"text":"x"}]}]}`, "", 400},
		{"too large", `{"model":"m","pad":"` + strings.Repeat("x", agentlooptest.MaxBodyBytes) + `"}`, "", 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := agentlooptest.NewTB(t, agentlooptest.Text("scripted"))
			resp := post(t, s.URL+"/v1/messages", tt.body)
			body := readAll(t, resp)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			var e struct {
				Type  string
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Type != "error" {
				t.Fatalf("body %s: %v", body, err)
			}
			wantType := "invalid_request_error"
			if tt.wantStatus == 413 {
				wantType = "request_too_large"
			}
			if e.Error.Type != wantType || (tt.wantMsg != "" && e.Error.Message != tt.wantMsg) || e.Error.Message == "" {
				t.Errorf("error %+v, want %s %q", e.Error, wantType, tt.wantMsg)
			}
			if s.Len() != 1 || s.LastRequest().Kind != agentlooptest.KindInvalid || s.LastRequest().Reply.Status != tt.wantStatus {
				t.Errorf("not recorded as invalid: %d requests", s.Len())
			}
			if s.Remaining() != 1 {
				t.Errorf("an invalid request consumed the queue")
			}
		})
	}
}

func TestOtherEndpoints(t *testing.T) {
	s := agentlooptest.NewTB(t, agentlooptest.Text("scripted"))
	body := `{"model":"m","messages":[{"role":"user","content":"count these tokens please"}]}`
	resp := post(t, s.URL+"/v1/messages/count_tokens?beta=true", body)
	if got := string(readAll(t, resp)); resp.StatusCode != 200 || got != fmt.Sprintf(`{"input_tokens":%d}`, len(body)/4) {
		t.Errorf("count_tokens: %d %s", resp.StatusCode, got)
	}
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	if got := decode(t, readAll(t, resp)); resp.StatusCode != 200 || !cmp.Equal(got, map[string]any{"data": []any{}, "has_more": false, "first_id": nil, "last_id": nil}) {
		t.Errorf("models: %d %v", resp.StatusCode, got)
	}
	resp, err = http.Get(s.URL + "/v1/nope")
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Error struct{ Type, Message string }
	}
	json.Unmarshal(readAll(t, resp), &e)
	if resp.StatusCode != 404 || e.Error.Type != "not_found_error" || !strings.Contains(e.Error.Message, "GET /v1/nope") || resp.Header.Get("request-id") == "" {
		t.Errorf("unknown endpoint: %d %+v", resp.StatusCode, e)
	}
	resp, err = http.Get(s.URL + "/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != 404 {
		t.Errorf("GET /v1/messages: %d", resp.StatusCode)
	}

	if s.Len() != 0 || s.Remaining() != 1 {
		t.Errorf("other endpoints counted as messages: Len %d Remaining %d", s.Len(), s.Remaining())
	}
	var kinds []string
	for _, r := range s.AllRequests() {
		kinds = append(kinds, r.Kind+" "+r.Method+" "+r.Path)
		if r.Reply != nil {
			t.Errorf("%s %s has a Reply", r.Method, r.Path)
		}
	}
	want := []string{"count_tokens POST /v1/messages/count_tokens", "other GET /v1/models", "other GET /v1/nope", "other GET /v1/messages"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("AllRequests (-want +got):\n%s", diff)
	}
	if got := s.AllRequests()[0].Params.Messages[0].Content[0].Text; got != "count these tokens please" {
		t.Errorf("count_tokens params not decoded: %q", got)
	}
}

func TestGzipBody(t *testing.T) {
	s := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	js, _ := json.Marshal(request(false, "compressed"))
	zw.Write(js)
	zw.Close()
	resp := post(t, s.URL+"/v1/messages", buf.Bytes(), "Content-Encoding", "gzip")
	readAll(t, resp)
	if resp.StatusCode != 200 || s.LastRequest().LastUserText() != "compressed" || string(s.LastRequest().Body) != string(js) {
		t.Errorf("status %d, recorded %q", resp.StatusCode, s.LastRequest().Body)
	}
	resp = post(t, s.URL+"/v1/messages", js, "Content-Encoding", "br")
	readAll(t, resp)
	if resp.StatusCode != 400 {
		t.Errorf("br body: status %d", resp.StatusCode)
	}
}

// answerText sends a non-streaming request and returns the reply's text.
func answerText(t *testing.T, s *agentlooptest.Server, text string, tools bool) string {
	t.Helper()
	req := request(false, text)
	if tools {
		req["tools"] = []any{map[string]any{"name": "Read"}}
	}
	var msg struct {
		Content []model.Content
	}
	if err := json.Unmarshal(readAll(t, post(t, s.URL+"/v1/messages", req)), &msg); err != nil {
		t.Fatal(err)
	}
	var out string
	for _, c := range msg.Content {
		out += c.Text
	}
	return out
}

func TestQueueRoutesAndRouter(t *testing.T) {
	s := agentlooptest.NewTB(t, agentlooptest.Text("main 1"))
	s.Route(func(r *agentlooptest.Request) bool { return strings.HasPrefix(r.LastUserText(), "sub:") },
		agentlooptest.Text("sub 1"), agentlooptest.Text("sub 2"))
	s.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		return agentlooptest.Text("side for " + r.LastUserText()), !r.IsMain()
	})

	steps := []struct {
		text  string
		tools bool
		want  string
		kind  string
	}{
		{"sub: a", true, "sub 1", agentlooptest.KindRouted},
		{"title please", false, "side for title please", agentlooptest.KindRouted},
		{"turn", true, "main 1", agentlooptest.KindMain},
		{"sub: b", true, "sub 2", agentlooptest.KindRouted},
		{"sub: c", true, "(script exhausted)", agentlooptest.KindExhausted},
		{"turn", true, "(script exhausted)", agentlooptest.KindExhausted},
	}
	for i, st := range steps {
		if got := answerText(t, s, st.text, st.tools); got != st.want {
			t.Errorf("step %d (%s): got %q, want %q", i, st.text, got, st.want)
		}
		if k := s.LastRequest().Kind; k != st.kind {
			t.Errorf("step %d (%s): kind %q, want %q", i, st.text, k, st.kind)
		}
	}

	s.SetExhausted(agentlooptest.Text("nothing left"))
	if got := answerText(t, s, "turn", true); got != "nothing left" {
		t.Errorf("after SetExhausted: %q", got)
	}
	s.Push(agentlooptest.Text("main 2"), agentlooptest.Text("main 3"))
	if s.Remaining() != 2 {
		t.Errorf("Remaining %d after Push", s.Remaining())
	}
	s.SetRouter(nil)
	for _, want := range []string{"main 2", "main 3", "nothing left"} {
		if got := answerText(t, s, "no tools", false); got != want {
			t.Errorf("after Push: %q, want %q", got, want)
		}
	}
}

// recTB records the errors a test would report.
type recTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recTB) Helper() {}
func (r *recTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func TestExpectAndNewTB(t *testing.T) {
	tb := &recTB{TB: t}
	wantResult := func(id string) func(*agentlooptest.Request) error {
		return func(r *agentlooptest.Request) error {
			if _, ok := r.ToolResult(id); !ok {
				return fmt.Errorf("no tool_result for %s", id)
			}
			return nil
		}
	}
	first := agentlooptest.ToolUse("toolu_1", "Read", nil)
	first.Expect = func(r *agentlooptest.Request) error {
		if r.LastUserText() != "start" {
			return errors.New("first request should say start")
		}
		return nil
	}
	second := agentlooptest.Text("done")
	second.Expect = wantResult("toolu_1")
	third := agentlooptest.Text("again")
	third.Expect = func(*agentlooptest.Request) error { panic("boom") }
	s := agentlooptest.NewTB(tb, first, second, third)

	answerText(t, s, "start", true)
	answerText(t, s, "no result", true) // mismatch
	answerText(t, s, "x", true)         // panic
	if len(tb.cleanups) != 1 {
		t.Fatalf("%d cleanups registered", len(tb.cleanups))
	}
	tb.cleanups[0]()
	want := []string{
		"agentlooptest: request 1 (main): no tool_result for toolu_1",
		"agentlooptest: request 2 (main): Expect panicked: boom",
	}
	if diff := cmp.Diff(want, tb.errs); diff != "" {
		t.Errorf("reported errors (-want +got):\n%s", diff)
	}
	// The server is closed.
	if _, err := http.Get(s.URL + "/v1/models"); err == nil {
		t.Errorf("server still answers after cleanup")
	}
}

func TestCallbackPanics(t *testing.T) {
	s := agentlooptest.NewServer(agentlooptest.Text("main"))
	defer s.Close()
	s.Route(func(*agentlooptest.Request) bool { panic("match") })
	s.SetRouter(func(*agentlooptest.Request) (agentlooptest.Reply, bool) { panic("router") })
	if got := answerText(t, s, "hi", true); got != "main" {
		t.Errorf("got %q", got)
	}
	if n := len(s.Mismatches()); n != 2 {
		t.Errorf("%d mismatches: %v", n, s.Mismatches())
	}
}

func TestConcurrentRequests(t *testing.T) {
	const n = 24
	var replies []agentlooptest.Reply
	var want []string
	for i := range n {
		r := agentlooptest.Text(fmt.Sprintf("reply %02d", i))
		r.Chunk = 3
		replies = append(replies, r)
		want = append(want, r.Content[0].Text)
	}
	s := agentlooptest.NewServer(replies...)
	defer s.Close()

	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, evs, err := stream(t, s.URL+"/v1/messages", request(true, fmt.Sprint("client ", i)))
			if err != nil {
				t.Error(err)
				return
			}
			var text string
			for _, ev := range evs {
				if d := ev.Data.(map[string]any); ev.Name == "content_block_delta" {
					text += d["delta"].(map[string]any)["text"].(string)
				}
			}
			mu.Lock()
			got = append(got, text)
			mu.Unlock()
		})
	}
	wg.Wait()
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	reqs := s.Requests()
	if len(reqs) != n || s.Remaining() != 0 {
		t.Fatalf("%d requests, %d remaining", len(reqs), s.Remaining())
	}
	// Requests are recorded in the order the queue was consumed.
	var order []string
	for _, r := range reqs {
		order = append(order, r.Reply.Content[0].Text)
	}
	if !slices.IsSorted(order) {
		t.Errorf("recorded order %v does not follow the queue", order)
	}
}

func TestCloseEndsStreams(t *testing.T) {
	r := agentlooptest.Text("slow")
	r.Chunk, r.EventDelay = 1, time.Hour
	s := agentlooptest.NewServer(r, agentlooptest.Reply{Delay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := postCtx(t, ctx, s.URL+"/v1/messages", request(true, "hi"))
	defer resp.Body.Close()
	delayed := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1/messages", strings.NewReader(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}]}`))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		delayed <- err
	}()
	// Wait until both requests are being answered.
	for s.Len() < 2 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	if _, err := readSSE(resp.Body); err == nil {
		t.Errorf("stream ended cleanly after Close")
	}
	if err := <-delayed; err == nil {
		t.Errorf("delayed request succeeded after Close")
	}
	s.Close() // idempotent
	if s.Len() != 2 {
		t.Errorf("Len %d after Close", s.Len())
	}
}
