package anthropic

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tools"
)

// builtinToolDefs returns the definitions of every built-in tool, sorted by
// name, as a session would declare them.
func builtinToolDefs(tb testing.TB) []model.ToolDef {
	tb.Helper()
	names := tools.Names()
	slices.Sort(names)
	defs := make([]model.ToolDef, 0, len(names))
	for _, n := range names {
		t, ok := tools.Builtin(n)
		if !ok {
			tb.Fatalf("no built-in tool %s", n)
		}
		info := t.Info()
		defs = append(defs, model.ToolDef{Name: info.Name, Description: info.Description, InputSchema: info.InputSchema})
	}
	return defs
}

// fileText is a tool result the size of a short source file read with line
// numbers: tabs, quotes, newlines and a non-ASCII rune, so escaping costs
// what it costs in practice.
func fileText(k int) string {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "%6d\t\tif err := run(ctx, \"step %d.%d\"); err != nil { return fmt.Errorf(\"step: %%w\", err) } // ok ✓\n", i+1, k, i)
	}
	return b.String()
}

// historyRequest is a request as the loop builds it after n−1 tool turns
// (n messages: the prompt, then assistant tool calls and user tool results
// alternating), with the given tool definitions and a cache breakpoint on
// the last block.
func historyRequest(n int, defs []model.ToolDef) *model.Request {
	msgs := []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("Look through the package and fix the failing step.")}}}
	for k := 1; len(msgs) < n; k++ {
		id := fmt.Sprintf("toolu_%024d", k)
		msgs = append(msgs, model.Message{Role: "assistant", Content: []model.Content{
			{Type: model.TypeThinking, Thinking: "The next file to look at is step " + fmt.Sprint(k) + ".", Signature: strings.Repeat("EqQBCkgIARABGAIiQ", 12)},
			model.TextBlock("I'll read the next file."),
			{Type: model.TypeToolUse, ID: id, Name: "Read", Input: []byte(fmt.Sprintf(`{"file_path":"/repo/pkg/step_%d.go"}`, k))},
		}})
		if len(msgs) == n {
			break
		}
		msgs = append(msgs, model.Message{Role: "user", Content: []model.Content{
			{Type: model.TypeToolResult, ToolUseID: id, Text: fileText(k)},
		}})
	}
	last := &msgs[len(msgs)-1]
	last.Content[len(last.Content)-1].CacheControl = &model.CacheControl{Type: "ephemeral"}
	return &model.Request{
		Model:     "claude-opus-5-5",
		MaxTokens: 32000,
		System:    []model.Content{{Type: model.TypeText, Text: strings.Repeat("You are a careful coding agent. ", 200), CacheControl: &model.CacheControl{Type: "ephemeral"}}},
		Tools:     defs,
		Metadata:  &model.Metadata{UserID: `{"session_id":"0b5c1f2e-8a6d-4c1b-9f0e-3d2a7c6b5e4f"}`},
		Thinking:  &model.Thinking{Type: "adaptive"},
		Stream:    true,
		Messages:  msgs,
	}
}

// reportCPU reports the process's CPU time per iteration since start, as
// cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if start > 0 && b.N > 0 {
		b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkEncodeRequest encodes the body of a request with a 40-message
// history and every built-in tool, the per-turn encoding cost on its own.
// The provider is the same across iterations, as it is across the turns
// of a session.
func BenchmarkEncodeRequest(b *testing.B) {
	p, err := New(&Options{APIKey: "sk-test"})
	if err != nil {
		b.Fatal(err)
	}
	req := historyRequest(40, builtinToolDefs(b))
	body, err := p.encode(req)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(body.n))
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if _, err := p.encode(req); err != nil {
			b.Fatal(err)
		}
	}
}

// streamBody is a reply of a thinking block, a text block and a tool call,
// each streamed in several deltas, as a server sends it.
func streamBody() string {
	s := ev("message_start", evStart) +
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
	for i := range 8 {
		s += ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"step %d of the plan, "}}`, i))
	}
	s += ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkgIARABGAIiQ"}}`) +
		ev("content_block_stop", blockStop(0)) +
		ev("content_block_start", textStart(1)) + ev("ping", evPing)
	for i := range 8 {
		s += ev("content_block_delta", textDelta(1, fmt.Sprintf("word%d ", i)))
	}
	s += ev("content_block_stop", blockStop(1)) +
		ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}`)
	for _, part := range []string{`{"file_`, `path": "/repo`, `/pkg/step_1.go"}`} {
		s += ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":%q}}`, part))
	}
	return s + ev("content_block_stop", blockStop(2)) +
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":290,"output_tokens":87}}`) +
		ev("message_stop", evStop)
}

// BenchmarkDecodeStream decodes one reply of 26 events, with the handler
// a no-op, the per-turn decoding cost on its own.
func BenchmarkDecodeStream(b *testing.B) {
	body := streamBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		res := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(strings.NewReader(body))}
		s := newStreamState(model.NopHandler{}, func() time.Duration { return 0 })
		if _, err := s.read(res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamHistory is one turn through the provider against a local
// server: the 40-message request encoded and sent, the reply decoded.
func BenchmarkStreamHistory(b *testing.B) {
	body := streamBody()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	p, err := New(&Options{APIKey: "sk-test", BaseURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	req := historyRequest(40, builtinToolDefs(b))
	b.ReportAllocs()
	defer reportCPU(b, processCPU())
	for b.Loop() {
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
}
