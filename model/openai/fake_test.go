package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// FakeServer is a scripted Chat Completions server for the tests of this
// package and of package openai_test: each POST /chat/completions gets the
// next FakeReply, and every request is kept for assertions.
type FakeServer struct {
	*httptest.Server
	t testing.TB

	mu       sync.Mutex
	replies  []FakeReply
	requests []FakeRequest
}

// FakeReply is one scripted answer: an error status with Body, or a
// stream of Chunks (each a data: payload) ended by data: [DONE] unless
// NoDone, or Raw written verbatim as the event stream.
type FakeReply struct {
	Status int
	Header map[string]string
	Body   string
	Chunks []string
	NoDone bool
	Raw    string
}

// FakeRequest is a request the server received.
type FakeRequest struct {
	Header http.Header
	Path   string
	Raw    []byte
	Body   chatRequest
}

// NewFakeServer starts a server answering with replies in order; a request
// beyond them fails the test.
func NewFakeServer(t testing.TB, replies ...FakeReply) *FakeServer {
	t.Helper()
	f := &FakeServer{t: t, replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// BaseURL returns the base URL to give Options.BaseURL.
func (f *FakeServer) BaseURL() string { return f.Server.URL + "/v1" }

// Requests returns the requests received so far.
func (f *FakeServer) Requests() []FakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeRequest(nil), f.requests...)
}

func (f *FakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || (r.URL.Path != "/v1/chat/completions" && r.URL.Path != "/v1/responses") {
		f.t.Errorf("fake server: unexpected %s %s", r.Method, r.URL.Path)
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("fake server: reading body: %v", err)
		return
	}
	var body chatRequest
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("fake server: body is not a chat request: %v\n%s", err, raw)
	}
	f.mu.Lock()
	f.requests = append(f.requests, FakeRequest{Header: r.Header.Clone(), Path: r.URL.Path, Raw: raw, Body: body})
	n := len(f.requests)
	var rep FakeReply
	ok := len(f.replies) > 0
	if ok {
		rep, f.replies = f.replies[0], f.replies[1:]
	}
	f.mu.Unlock()
	if !ok {
		f.t.Errorf("fake server: request %d has no scripted reply:\n%s", n, raw)
		http.Error(w, `{"error":{"message":"no reply scripted"}}`, http.StatusInternalServerError)
		return
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Status >= 400 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		_, _ = io.WriteString(w, rep.Body)
		return
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if rep.Raw != "" {
		_, _ = io.WriteString(w, rep.Raw)
		return
	}
	for _, c := range rep.Chunks {
		_, _ = fmt.Fprintf(w, "data: %s\n\n", c)
		if fl != nil {
			fl.Flush()
		}
	}
	if !rep.NoDone {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}
}

// Chunk builders: each returns one chat.completion.chunk's JSON.

// TextChunk is a content delta.
func TextChunk(s string) string {
	return chunkJSON(map[string]any{"content": s}, nil)
}

// ReasoningChunk is a reasoning_content delta (vLLM, DeepSeek).
func ReasoningChunk(s string) string {
	return chunkJSON(map[string]any{"reasoning_content": s}, nil)
}

// ToolChunk is a tool_calls delta for the call at index; id and name are
// left out when empty, as servers do after a call's first delta.
func ToolChunk(index int, id, name, args string) string {
	fn := map[string]any{"arguments": args}
	if name != "" {
		fn["name"] = name
	}
	tc := map[string]any{"index": index, "function": fn}
	if id != "" {
		tc["id"], tc["type"] = id, "function"
	}
	return chunkJSON(map[string]any{"tool_calls": []any{tc}}, nil)
}

// FinishChunk ends the choice with reason.
func FinishChunk(reason string) string {
	return chunkJSON(map[string]any{}, &reason)
}

// UsageChunk is the last chunk of a stream with include_usage.
func UsageChunk(prompt, completion, cached int) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake-model", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion,
			"total_tokens": prompt + completion, "prompt_tokens_details": map[string]any{"cached_tokens": cached}},
	})
	return string(b)
}

// TextReply is a whole reply of text, split into the given deltas.
func TextReply(parts ...string) FakeReply {
	var cs []string
	for _, p := range parts {
		cs = append(cs, TextChunk(p))
	}
	return FakeReply{Chunks: append(cs, FinishChunk("stop"), UsageChunk(10, 5, 0))}
}

// ToolReply is a whole reply calling one tool.
func ToolReply(id, name, args string) FakeReply {
	return FakeReply{Chunks: []string{ToolChunk(0, id, name, args), FinishChunk("tool_calls"), UsageChunk(10, 5, 0)}}
}

func chunkJSON(delta map[string]any, finish *string) string {
	ch := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != nil {
		ch["finish_reason"] = *finish
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake-model",
		"choices": []any{ch},
	})
	return string(b)
}

// MessagesJSON returns the request's messages as indented JSON, for
// failure output.
func (r FakeRequest) MessagesJSON() string {
	b, _ := json.MarshalIndent(r.Body.Messages, "", "  ")
	return string(b)
}

// ToolMessages returns the request's role "tool" messages.
func (r FakeRequest) ToolMessages() []chatMessage {
	var out []chatMessage
	for _, m := range r.Body.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// ToolNames returns the names of the request's tools.
func (r FakeRequest) ToolNames() []string {
	var out []string
	for _, t := range r.Body.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// ContentText returns a message's content as text: the string, or the
// text parts joined.
func ContentText(m chatMessage) string {
	switch c := m.Content.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				if s, ok := pm["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}
