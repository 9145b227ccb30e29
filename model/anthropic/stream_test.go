package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
)

func TestStreamReplies(t *testing.T) {
	// web_search_tool_result is not modelled: it is kept verbatim.
	const searchResult = `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://example.com","title":"Example","encrypted_content":"abc"}]}`
	var searchBlock model.Content
	if err := json.Unmarshal([]byte(searchResult), &searchBlock); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		stream string
		want   func(r *model.Response)
	}{{
		name:   "text",
		stream: helloStream(),
		want:   func(*model.Response) {},
	}, {
		name: "tool_use with chunked input",
		stream: ev("message_start", evStart) +
			ev("content_block_start", textStart(0)) +
			ev("content_block_delta", textDelta(0, "Listing.")) +
			ev("content_block_stop", blockStop(0)) +
			ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"comm"}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"and\": \"ls -la\"}"}}`) +
			ev("content_block_stop", blockStop(1)) +
			ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"ListAgents","input":{}}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`) +
			ev("content_block_stop", blockStop(2)) +
			ev("message_delta", msgDelta("tool_use", 40)) +
			ev("message_stop", evStop),
		want: func(r *model.Response) {
			r.Content = []model.Content{
				model.TextBlock("Listing."),
				{Type: "tool_use", ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command": "ls -la"}`)},
				{Type: "tool_use", ID: "toolu_2", Name: "ListAgents", Input: json.RawMessage(`{}`)},
			}
			r.StopReason = "tool_use"
			r.Usage.OutputTokens = 40
		},
	}, {
		name: "thinking and signature verbatim",
		stream: ev("message_start", evStart) +
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think \u2014 \"carefully\".\n"}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkgIARAB+/GAIiQ=="}}`) +
			ev("content_block_stop", blockStop(0)) +
			ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}}`) +
			ev("content_block_stop", blockStop(1)) +
			ev("content_block_start", textStart(2)) +
			ev("content_block_delta", textDelta(2, "Done.")) +
			ev("content_block_stop", blockStop(2)) +
			ev("message_delta", msgDelta("end_turn", 90)) +
			ev("message_stop", evStop),
		want: func(r *model.Response) {
			r.Content = []model.Content{
				{Type: "thinking", Thinking: "Let me think — \"carefully\".\n", Signature: "EqQBCkgIARAB+/GAIiQ=="},
				{Type: "redacted_thinking", Data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
					Raw: json.RawMessage(`{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}`)},
				model.TextBlock("Done."),
			}
			r.Usage.OutputTokens = 90
		},
	}, {
		name: "delta usage carries output only",
		stream: ev("message_start", `{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":2000,"cache_read_input_tokens":500,"cache_creation":{"ephemeral_5m_input_tokens":1500,"ephemeral_1h_input_tokens":500},"output_tokens":1,"service_tier":"standard"}}}`) +
			ev("content_block_start", textStart(0)) +
			ev("content_block_delta", textDelta(0, "Hi")) +
			ev("content_block_stop", blockStop(0)) +
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":42}}`) +
			ev("message_stop", evStop),
		want: func(r *model.Response) {
			r.ID, r.Model = "msg_2", "claude-sonnet-5-5"
			r.Content = []model.Content{model.TextBlock("Hi")}
			r.StartUsage = model.Usage{InputTokens: 10, OutputTokens: 1, CacheCreationInputTokens: 2000, CacheReadInputTokens: 500,
				CacheCreation: &model.CacheCreation{Ephemeral1hInputTokens: 500, Ephemeral5mInputTokens: 1500}, ServiceTier: "standard"}
			r.Usage = r.StartUsage
			r.Usage.CacheCreation = &model.CacheCreation{Ephemeral1hInputTokens: 500, Ephemeral5mInputTokens: 1500}
			r.Usage.OutputTokens = 42
		},
	}, {
		name: "delta usage overrides what it carries",
		stream: ev("message_start", evStart) +
			ev("content_block_start", textStart(0)) +
			ev("content_block_stop", blockStop(0)) +
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END"},"usage":{"input_tokens":310,"cache_read_input_tokens":null,"output_tokens":3,"server_tool_use":{"web_search_requests":2,"web_fetch_requests":0}}}`) +
			ev("message_stop", evStop),
		want: func(r *model.Response) {
			end := "END"
			r.Content = []model.Content{model.TextBlock("")}
			r.StopReason, r.StopSequence = "stop_sequence", &end
			r.Usage = model.Usage{InputTokens: 310, OutputTokens: 3, ServerToolUse: &model.ServerToolUse{WebSearchRequests: 2}}
		},
	}, {
		name: "unknown block types and events kept",
		stream: ev("message_start", evStart) +
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"go\"}"}}`) +
			ev("content_block_stop", blockStop(0)) +
			ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":`+searchResult+`}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"future_delta","x":1}}`) +
			ev("content_block_stop", blockStop(1)) +
			ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"mcp_tool_use","id":"mcptoolu_1","name":"echo","server_name":"s","input":{}}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}}`) +
			ev("content_block_stop", blockStop(2)) +
			ev("future_event", `{"type":"future_event","n":1}`) +
			ev("message_delta", msgDelta("end_turn", 9)) +
			ev("message_stop", evStop),
		want: func(r *model.Response) {
			searchBlock.Raw = json.RawMessage(searchResult)
			r.Content = []model.Content{
				{Type: "server_tool_use", ID: "srvtoolu_1", Name: "web_search", Input: json.RawMessage(`{"query":"go"}`)},
				searchBlock,
				{Type: "mcp_tool_use", ID: "mcptoolu_1", Name: "echo", Input: json.RawMessage(`{"a":1}`),
					Raw: json.RawMessage(`{"id":"mcptoolu_1","input":{"a":1},"name":"echo","server_name":"s","type":"mcp_tool_use"}`)},
			}
			r.Usage.OutputTokens = 9
		},
	}, {
		name: "data lines without event names",
		stream: "data: " + evStart + "\n\n" +
			": a comment\n\n" +
			"data: " + textStart(0) + "\n\n" +
			"data: " + textDelta(0, "Hello world") + "\n\n" +
			"data: " + blockStop(0) + "\n\n" +
			"data: " + msgDelta("end_turn", 7) + "\n\n" +
			"data: " + evStop + "\n\n",
		want: func(*model.Response) {},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, sseReply(tt.stream))
			p, _ := testProvider(t, f, nil)
			got, err := p.Stream(context.Background(), simpleRequest(), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := helloResponse()
			tt.want(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamHandlerOrder(t *testing.T) {
	stream := ev("message_start", evStart) +
		ev("ping", evPing) +
		ev("content_block_start", textStart(0)) +
		ev("content_block_delta", textDelta(0, "Hi")) +
		ev("content_block_stop", blockStop(0)) +
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\":\"/a\"}"}}`) +
		ev("ping", evPing) +
		ev("content_block_stop", blockStop(1)) +
		ev("message_delta", msgDelta("tool_use", 12)) +
		ev("message_stop", evStop)
	f := newFakeAPI(t, sseReply(stream))
	p, _ := testProvider(t, f, nil)
	h := &recorder{}
	if _, err := p.Stream(context.Background(), simpleRequest(), h); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"event:message_start",
		"event:content_block_start", "event:content_block_delta", "block:0", "event:content_block_stop",
		"event:content_block_start", "event:content_block_delta", "block:1", "event:content_block_stop",
		"event:message_delta", "event:message_stop",
	}
	if diff := cmp.Diff(want, h.log); diff != "" {
		t.Errorf("handler calls (-want +got):\n%s", diff)
	}

	// Events are passed verbatim; only message_start has a TTFT.
	if got := string(h.events[0].Data); got != evStart {
		t.Errorf("message_start data = %s, want %s", got, evStart)
	}
	if h.events[0].TTFT != time.Second {
		t.Errorf("message_start TTFT = %v, want 1s", h.events[0].TTFT)
	}
	for _, e := range h.events[1:] {
		if e.TTFT != 0 {
			t.Errorf("%s has TTFT %v", e.Type, e.TTFT)
		}
	}

	// Block sees the message so far.
	start := helloResponse()
	start.Content = []model.Content{model.TextBlock("Hi")}
	start.StopReason, start.RequestID, start.Duration = "", "", 0
	start.Usage = start.StartUsage
	wantBlocks := []blockCall{
		{0, model.TextBlock("Hi"), start},
		{1, model.Content{Type: "tool_use", ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"file_path":"/a"}`)}, nil},
	}
	second := *start
	second.Content = append([]model.Content{model.TextBlock("Hi")}, wantBlocks[1].Block)
	wantBlocks[1].Start = &second
	if diff := cmp.Diff(wantBlocks, h.blocks); diff != "" {
		t.Errorf("Block calls (-want +got):\n%s", diff)
	}
}

func TestStreamMalformed(t *testing.T) {
	start := ev("message_start", evStart) + ev("content_block_start", textStart(0))
	tests := []struct {
		name  string
		reply reply
		want  string // in the error message
	}{{
		name:  "bad JSON",
		reply: sseReply(start + ev("content_block_delta", `{"type":"content_block_delta","index":0,`) + ev("message_stop", evStop)),
		want:  "event 3 (content_block_delta): invalid JSON",
	}, {
		name:  "ends without message_stop",
		reply: sseReply(start + ev("content_block_delta", textDelta(0, "Hel"))),
		want:  "stream ended after 3 events without message_stop",
	}, {
		name:  "empty body",
		reply: sseReply(""),
		want:  "without message_start",
	}, {
		name: "not an event stream",
		reply: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"msg_1","type":"message","content":[]}`))
		},
		want: "response is not an event stream (Content-Type application/json)",
	}, {
		name:  "delta before message_start",
		reply: sseReply(ev("content_block_delta", textDelta(0, "x"))),
		want:  "content_block_delta before message_start",
	}, {
		name:  "delta for a block never started",
		reply: sseReply(start + ev("content_block_delta", textDelta(1, "x"))),
		want:  "block 1 was never started",
	}, {
		name:  "stop twice",
		reply: sseReply(start + ev("content_block_stop", blockStop(0)) + ev("content_block_stop", blockStop(0))),
		want:  "block 0 already stopped",
	}, {
		name:  "block index skipped",
		reply: sseReply(ev("message_start", evStart) + ev("content_block_start", textStart(1))),
		want:  "block index 1, want 0",
	}, {
		name:  "delta of the wrong kind",
		reply: sseReply(start + ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`)),
		want:  "input_json_delta for a text block",
	}, {
		name: "tool input not JSON",
		reply: sseReply(ev("message_start", evStart) +
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":"}}`) +
			ev("content_block_stop", blockStop(0))),
		want: "block 0: input is not valid JSON",
	}, {
		name:  "message_stop with a block open",
		reply: sseReply(start + ev("message_stop", evStop)),
		want:  "block 0 never stopped",
	}, {
		name:  "second message_start",
		reply: sseReply(ev("message_start", evStart) + ev("message_start", evStart)),
		want:  "second message_start",
	}, {
		name:  "connection dropped",
		reply: hangupReply(start + ev("content_block_delta", textDelta(0, "Hel"))),
		want:  "reading the stream failed after 3 events",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, tt.reply)
			p, _ := testProvider(t, f, func(o *Options) { o.MaxRetries = intp(0) })
			resp, err := p.Stream(context.Background(), simpleRequest(), nil)
			if resp != nil || err == nil {
				t.Fatalf("Stream = %v, %v; want an error", resp, err)
			}
			if !errors.Is(err, model.ErrMalformedStream) {
				t.Errorf("error %q does not wrap ErrMalformedStream", err)
			}
			var ae *model.APIError
			if !errors.As(err, &ae) || ae.Retries != 0 || ae.Status != 0 {
				t.Errorf("error %#v, want an *APIError with no status and no retries", err)
			}
			if !contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

// FuzzStreamParser feeds arbitrary bytes to the event reader: whatever they
// hold, it must not panic, and a reply it accepts must be consistent.
func FuzzStreamParser(f *testing.F) {
	f.Add([]byte(helloStream()))
	f.Add([]byte(ev("message_start", evStart) +
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`) +
		ev("content_block_stop", blockStop(0)) + ev("message_stop", evStop)))
	f.Add([]byte(ev("message_start", `{"message":null}`)))
	f.Add([]byte(ev("content_block_delta", `{"index":-1}`)))
	f.Add([]byte(ev("message_start", evStart) + ev("content_block_start", `{"index":0,"content_block":{"type":"x"}}`) +
		ev("content_block_delta", `{"index":0,"delta":{"type":"input_json_delta","partial_json":"[1]"}}`) + ev("content_block_stop", `{"index":0}`)))
	f.Add([]byte("data: {\n\n"))
	f.Add([]byte(ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		h := &recorder{}
		s := newStreamState(h, func() time.Duration { return time.Millisecond })
		res := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(data))}
		resp, err := s.read(res)
		if err != nil {
			var se *streamError
			if !errors.Is(err, model.ErrMalformedStream) && !errors.As(err, &se) {
				t.Fatalf("error %v is neither malformed nor a stream error", err)
			}
			return
		}
		if len(resp.Content) != len(h.blocks) {
			t.Fatalf("%d blocks, %d Block calls", len(resp.Content), len(h.blocks))
		}
		for i, c := range resp.Content {
			if c.Type == model.TypeToolUse && !json.Valid(c.Input) {
				t.Fatalf("block %d input %q is not JSON", i, c.Input)
			}
			if _, err := json.Marshal(c); err != nil {
				t.Fatalf("block %d does not marshal: %v", i, err)
			}
		}
		for _, e := range h.events {
			if !json.Valid(e.Data) {
				t.Fatalf("event %s passed with invalid data %q", e.Type, e.Data)
			}
		}
	})
}
