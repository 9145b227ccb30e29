package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
)

// responsesSSE writes Responses API events, each with its event: line.
func responsesSSE(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var h struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &h)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", h.Type, e)
	}
	return b.String()
}

// TestResponsesRequest: with API "responses" the conversation goes to
// /responses as instructions, input items (function calls and their
// outputs kept in order with their call ids) and function tools, with
// store off.
func TestResponsesRequest(t *testing.T) {
	yes := true
	req := &model.Request{
		Model:  "claude-sonnet-4-5",
		System: []model.Content{model.TextBlock("Be brief.")},
		Messages: []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock("Look"),
				{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "AAAA"}}}},
			{Role: "assistant", Content: []model.Content{{Type: model.TypeThinking, Thinking: "x"}, model.TextBlock("Reading."),
				{Type: model.TypeToolUse, ID: "call_1", Name: "Read", Input: json.RawMessage(`{"file_path":"/a"}`)}}},
			{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: "call_1", Text: "no such file", IsError: &yes}}},
		},
		Tools:     []model.ToolDef{{Name: "Read", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens: 2000,
		Output:    &model.OutputConfig{Effort: "low"},
	}
	want := `{
	  "model": "gpt-5",
	  "instructions": "Be brief.",
	  "input": [
	    {"role": "user", "content": [{"type": "input_text", "text": "Look"}, {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]},
	    {"role": "assistant", "content": "Reading."},
	    {"type": "function_call", "call_id": "call_1", "name": "Read", "arguments": "{\"file_path\":\"/a\"}"},
	    {"type": "function_call_output", "call_id": "call_1", "output": "[tool error] no such file"}
	  ],
	  "tools": [{"type": "function", "name": "Read", "parameters": {"type": "object"}, "strict": false}],
	  "max_output_tokens": 2000,
	  "reasoning": {"effort": "low", "summary": "auto"},
	  "store": false,
	  "stream": true
	}`
	f := NewFakeServer(t, FakeReply{Raw: responsesSSE(`{"type":"response.completed","response":{"id":"resp_1"}}`)})
	p, _ := testProvider(t, f, func(o *Options) { o.API, o.Model = APIResponses, "gpt-5" })
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := f.Requests()[0]
	if got.Path != "/v1/responses" {
		t.Errorf("path %s, want /v1/responses", got.Path)
	}
	if d := cmp.Diff(jsonValue(t, []byte(want)), jsonValue(t, got.Raw)); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
}

// TestResponsesStream: reasoning summaries, text and a function call
// stream back as thinking, text and tool_use blocks; usage and the stop
// reason come from response.completed or response.incomplete.
func TestResponsesStream(t *testing.T) {
	events := responsesSSE(
		`{"type":"response.created","response":{"id":"resp_1","model":"gpt-5-2026"}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1"}}`,
		`{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"Need the file."}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1"}}`,
		`{"type":"response.output_text.delta","output_index":1,"delta":"Reading "}`,
		`{"type":"response.output_text.delta","output_index":1,"delta":"it."}`,
		`{"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_9","name":"Read"}}`,
		`{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"file_path\":"}`,
		`{"type":"response.function_call_arguments.delta","output_index":2,"delta":"\"/a\"}"}`,
		`{"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":500,"input_tokens_details":{"cached_tokens":300},"output_tokens":40}}}`,
	)
	f := NewFakeServer(t, FakeReply{Raw: events},
		FakeReply{Raw: responsesSSE(`{"type":"response.output_text.delta","delta":"cut"}`,
			`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"call_2","name":"Bash"}}`,
			`{"type":"response.function_call_arguments.done","output_index":1,"arguments":"{\"command\":\"ls\"}"}`,
			`{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}`)})
	p, _ := testProvider(t, f, func(o *Options) { o.API = APIResponses })
	var h recorder
	resp, err := p.Stream(context.Background(), userText("hi"), &h)
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Response{ID: "resp_1", Type: "message", Role: "assistant", Model: "gpt-5-2026", StopReason: "tool_use",
		Content: []model.Content{{Type: model.TypeThinking, Thinking: "Need the file."}, model.TextBlock("Reading it."),
			{Type: model.TypeToolUse, ID: "call_9", Name: "Read", Input: json.RawMessage(`{"file_path":"/a"}`)}},
		Usage: model.Usage{InputTokens: 200, CacheReadInputTokens: 300, OutputTokens: 40}}
	resp.Duration, resp.TTFT = 0, 0
	if d := cmp.Diff(want, resp); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	if len(h.blocks) != 3 || h.events[0].Type != "message_start" || h.events[len(h.events)-1].Type != "message_stop" {
		t.Errorf("handler calls %v", h.log)
	}
	resp, err = p.Stream(context.Background(), userText("hi"), nil)
	if err != nil || resp.StopReason != "max_tokens" || resp.Text() != "cut" || len(resp.Content) != 2 ||
		string(resp.Content[1].Input) != `{"command":"ls"}` {
		t.Errorf("incomplete reply: %+v, %v; want stop reason max_tokens, the text and the call's arguments from .done", resp, err)
	}
}

// TestResponsesFailed: response.failed is a stream error, retried and then
// reported with the server's message.
func TestResponsesFailed(t *testing.T) {
	zero := 0
	f := NewFakeServer(t, FakeReply{Raw: responsesSSE(`{"type":"response.failed","response":{"error":{"code":"server_error","message":"the model broke"}}}`)})
	p, _ := testProvider(t, f, func(o *Options) { o.API, o.MaxRetries = APIResponses, &zero })
	_, err := p.Stream(context.Background(), userText("hi"), nil)
	var ae *model.APIError
	if !errors.As(err, &ae) || ae.Message != "the model broke" {
		t.Errorf("error %v, want an APIError with the server's message", err)
	}
	if _, err := New(&Options{API: "assistants", BaseURL: "http://x"}); err == nil {
		t.Error("New accepted an unknown API")
	}
}
