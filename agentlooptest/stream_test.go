package agentlooptest_test

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
)

const (
	startUsage = `{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}`
	fullUsage  = `{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}`
)

func messageStart(id, usage string) string {
	return `message_start {"type":"message_start","message":{"id":"` + id + `","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":` + usage + `}}`
}

func messageDelta(stop, usage string) string {
	return `message_delta {"type":"message_delta","delta":{"stop_reason":"` + stop + `","stop_sequence":null},"usage":` + usage + `}`
}

const (
	ping        = `ping {"type":"ping"}`
	messageStop = `message_stop {"type":"message_stop"}`
)

func TestStreamEvents(t *testing.T) {
	tests := []struct {
		name  string
		reply agentlooptest.Reply
		want  []string
	}{{
		name:  "text",
		reply: agentlooptest.Reply{ID: "msg_1", Content: []model.Content{model.TextBlock("Hello, world!")}, Chunk: 5},
		want: []string{
			messageStart("msg_1", startUsage),
			ping,
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", wor"}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ld!"}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			messageDelta("end_turn", fullUsage),
			messageStop,
		},
	}, {
		name:  "empty text gets one empty delta",
		reply: agentlooptest.Reply{ID: "msg_1", Content: []model.Content{model.TextBlock("")}},
		want: []string{
			messageStart("msg_1", startUsage),
			ping,
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			messageDelta("end_turn", fullUsage),
			messageStop,
		},
	}, {
		name:  "chunks never split a character",
		reply: agentlooptest.Reply{ID: "msg_1", Content: []model.Content{model.TextBlock("héllo wörld")}, Chunk: 3},
		want: []string{
			messageStart("msg_1", startUsage),
			ping,
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hél"}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo "}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"wör"}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ld"}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			messageDelta("end_turn", fullUsage),
			messageStop,
		},
	}, {
		name: "tool_use",
		reply: func() agentlooptest.Reply {
			r := agentlooptest.ToolUse("toolu_1", "Read", map[string]string{"file_path": "/a"})
			r.ID, r.Chunk = "msg_2", 10
			return r
		}(),
		want: []string{
			messageStart("msg_2", startUsage),
			ping,
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"file_pat"}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"h\":\"/a\"}"}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			messageDelta("tool_use", fullUsage),
			messageStop,
		},
	}, {
		name: "thinking then text",
		reply: agentlooptest.Reply{ID: "msg_3", Chunk: 6, StopReason: "max_tokens", Content: []model.Content{
			agentlooptest.ThinkingBlock("Let me think.", "sig_1"),
			model.TextBlock("ok"),
		}},
		want: []string{
			messageStart("msg_3", startUsage),
			ping,
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" think"}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"."}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig_1"}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ok"}}`,
			`content_block_stop {"type":"content_block_stop","index":1}`,
			messageDelta("max_tokens", fullUsage),
			messageStop,
		},
	}, {
		name:  "stop sequence",
		reply: agentlooptest.Reply{ID: "msg_9", Content: []model.Content{model.TextBlock("1, 2")}, StopReason: "stop_sequence", StopSequence: ", 3"},
		want: []string{
			messageStart("msg_9", startUsage),
			ping,
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"1, 2"}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			`message_delta {"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":", 3"},"usage":` + fullUsage + `}`,
			messageStop,
		},
	}, {
		name: "output_only delta usage",
		reply: agentlooptest.Reply{
			ID: "msg_4", Content: []model.Content{model.TextBlock("hi")}, DeltaUsage: agentlooptest.DeltaUsageOutputOnly,
			Usage: model.Usage{InputTokens: 100, OutputTokens: 7, CacheReadInputTokens: 50, CacheCreationInputTokens: 20},
		},
		want: []string{
			messageStart("msg_4", `{"input_tokens":100,"output_tokens":1,"cache_creation_input_tokens":20,"cache_read_input_tokens":50}`),
			ping,
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			messageDelta("end_turn", `{"output_tokens":7}`),
			messageStop,
		},
	}, {
		name: "usage with zero output tokens and details",
		reply: agentlooptest.Reply{
			ID: "msg_5", Content: []model.Content{model.TextBlock("")},
			Usage: model.Usage{InputTokens: 3, CacheCreation: &model.CacheCreation{Ephemeral1hInputTokens: 4}},
		},
		want: []string{
			messageStart("msg_5", `{"input_tokens":3,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_1h_input_tokens":4,"ephemeral_5m_input_tokens":0}}`),
			ping,
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			messageDelta("end_turn", `{"input_tokens":3,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_1h_input_tokens":4,"ephemeral_5m_input_tokens":0}}`),
			messageStop,
		},
	}, {
		name: "redacted thinking, server tool use and its result",
		reply: func() agentlooptest.Reply {
			r := agentlooptest.Blocks(
				agentlooptest.RedactedThinkingBlock("abc"),
				agentlooptest.ServerToolUseBlock("srvtoolu_1", "web_search", map[string]string{"query": "go"}),
				agentlooptest.RawBlock(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://go.dev","title":"Go"}]}`),
				model.TextBlock("done"),
			)
			r.ID = "msg_6"
			return r
		}(),
		want: []string{
			messageStart("msg_6", startUsage),
			ping,
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"abc"}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
			`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`,
			`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"go\"}"}}`,
			`content_block_stop {"type":"content_block_stop","index":1}`,
			`content_block_start {"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://go.dev","title":"Go"}]}}`,
			`content_block_stop {"type":"content_block_stop","index":2}`,
			`content_block_start {"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}`,
			`content_block_delta {"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"done"}}`,
			`content_block_stop {"type":"content_block_stop","index":3}`,
			messageDelta("end_turn", fullUsage),
			messageStop,
		},
	}, {
		name: "stream error right after message_start",
		reply: func() agentlooptest.Reply {
			r := agentlooptest.ErrorEvent("overloaded_error", "Overloaded")
			r.ID = "msg_7"
			return r
		}(),
		want: []string{
			messageStart("msg_7", startUsage),
			`error {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		},
	}, {
		name: "stream error after content, with defaults",
		reply: agentlooptest.Reply{
			ID: "msg_8", Content: []model.Content{model.TextBlock("partial")},
			StreamError: &agentlooptest.StreamError{Type: "api_error"},
		},
		want: []string{
			messageStart("msg_8", startUsage),
			ping,
			`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}}`,
			`content_block_stop {"type":"content_block_stop","index":0}`,
			`error {"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := agentlooptest.NewTB(t, tt.reply)
			resp, got, err := stream(t, s.URL+"/v1/messages", request(true, "hi"))
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("content-type %q", ct)
			}
			if id := resp.Header.Get("request-id"); !strings.HasPrefix(id, "req_") || id != s.LastRequest().RequestID {
				t.Errorf("request-id %q, recorded %q", id, s.LastRequest().RequestID)
			}
			if diff := cmp.Diff(events(t, tt.want...), got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			for _, ev := range got {
				if typ := ev.Data.(map[string]any)["type"]; typ != ev.Name {
					t.Errorf("event %q has data type %q", ev.Name, typ)
				}
			}
		})
	}
}

// TestToolInputReassembles checks that the input_json_delta pieces add up to
// the scripted input, whatever the chunk size.
func TestToolInputReassembles(t *testing.T) {
	input := map[string]any{
		"command":     "echo 'héllo <wörld>' && ls -la",
		"timeout":     1200.5,
		"nested":      map[string]any{"list": []any{1.0, "two", nil, true}, "empty": map[string]any{}},
		"description": strings.Repeat("long ", 50),
	}
	for _, chunk := range []int{1, 3, 40, 1000} {
		s := agentlooptest.NewTB(t, agentlooptest.Reply{Chunk: chunk, Content: []model.Content{
			model.TextBlock("Running it."),
			agentlooptest.ToolUseBlock("", "Bash", input),
			agentlooptest.ToolUseBlock("toolu_b", "Read", json.RawMessage(`{ "file_path" : "/x" }`)),
		}})
		_, evs, err := stream(t, s.URL+"/v1/messages", request(true, "go"))
		if err != nil {
			t.Fatal(err)
		}
		partial := map[float64]string{}
		ids := map[float64]string{}
		var stop any
		for _, ev := range evs {
			d := ev.Data.(map[string]any)
			switch ev.Name {
			case "content_block_start":
				if cb := d["content_block"].(map[string]any); cb["type"] == "tool_use" {
					ids[d["index"].(float64)] = cb["id"].(string)
				}
			case "content_block_delta":
				if delta := d["delta"].(map[string]any); delta["type"] == "input_json_delta" {
					partial[d["index"].(float64)] += delta["partial_json"].(string)
				}
			case "message_delta":
				stop = d["delta"].(map[string]any)["stop_reason"]
			}
		}
		var got1, got2 any
		if err := json.Unmarshal([]byte(partial[1]), &got1); err != nil {
			t.Fatalf("chunk %d: input %q: %v", chunk, partial[1], err)
		}
		if diff := cmp.Diff(any(input), got1); diff != "" {
			t.Errorf("chunk %d: input (-want +got):\n%s", chunk, diff)
		}
		if partial[2] != `{"file_path":"/x"}` {
			t.Errorf("chunk %d: raw input reassembled as %q, want it compacted", chunk, partial[2])
		}
		if err := json.Unmarshal([]byte(partial[2]), &got2); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(ids[1], "toolu_fake_") || ids[2] != "toolu_b" {
			t.Errorf("chunk %d: tool ids %v", chunk, ids)
		}
		// The recorded reply has the generated ID filled in.
		if rec := s.LastRequest().Reply.Content[1].ID; rec != ids[1] {
			t.Errorf("recorded id %q, streamed %q", rec, ids[1])
		}
		if stop != "tool_use" {
			t.Errorf("stop_reason %v", stop)
		}
	}
}

func TestMalformedToolInputIsStreamedVerbatim(t *testing.T) {
	s := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "Read", `{"file_path": "/a`))
	_, evs, err := stream(t, s.URL+"/v1/messages", request(true, "go"))
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, ev := range evs {
		if d := ev.Data.(map[string]any); ev.Name == "content_block_delta" {
			got += d["delta"].(map[string]any)["partial_json"].(string)
		}
	}
	if want := `{"file_path": "/a`; got != want {
		t.Errorf("partial_json adds up to %q, want %q", got, want)
	}
}

func TestRawSSE(t *testing.T) {
	raw := "event: message_start\ndata: {not json\n\nevent: bogus\n"
	s := agentlooptest.NewTB(t, agentlooptest.Reply{RawSSE: raw, Header: map[string]string{"x-extra": "1"}})
	resp := post(t, s.URL+"/v1/messages", request(true, "hi"))
	body := readAll(t, resp)
	if string(body) != raw {
		t.Errorf("body %q, want %q", body, raw)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || resp.Header.Get("x-extra") != "1" {
		t.Errorf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
}

func TestCutAfter(t *testing.T) {
	for _, n := range []int{1, 3, 8} {
		r := agentlooptest.Text("some text that is long enough")
		r.Chunk, r.CutAfter = 5, n
		s := agentlooptest.NewTB(t, r)
		_, evs, err := stream(t, s.URL+"/v1/messages", request(true, "hi"))
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("CutAfter %d: read error %v, want unexpected EOF", n, err)
		}
		if len(evs) != n {
			t.Errorf("CutAfter %d: got %d events", n, len(evs))
		}
		if evs[0].Name != "message_start" {
			t.Errorf("first event %q", evs[0].Name)
		}
	}
}

func TestDelays(t *testing.T) {
	const d = 30 * time.Millisecond
	r := agentlooptest.Text("abcdef")
	r.Chunk, r.EventDelay = 2, d/3 // 9 events: 8 gaps
	s := agentlooptest.NewTB(t, agentlooptest.Reply{Delay: d, Content: []model.Content{model.TextBlock("x")}}, r)

	start := time.Now()
	resp := post(t, s.URL+"/v1/messages", request(false, "hi"))
	readAll(t, resp)
	if el := time.Since(start); el < d {
		t.Errorf("Delay: answered after %v, want at least %v", el, d)
	}

	start = time.Now()
	_, evs, err := stream(t, s.URL+"/v1/messages", request(true, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if el, want := time.Since(start), time.Duration(len(evs)-1)*d/3; el < want {
		t.Errorf("EventDelay: %d events took %v, want at least %v", len(evs), el, want)
	}
}
