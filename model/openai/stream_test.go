package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/sse"
	"github.com/agentloop/agentloop/model"
)

// sseOf writes chunks as an event stream ended by [DONE].
func sseOf(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// TestSSEReader: CRLF line ends, comments, event names, multi-line data
// and a last event without its blank line.
func TestSSEReader(t *testing.T) {
	in := ": keep-alive\r\n\r\nevent: error\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: [DONE]"
	r := sse.NewReader(strings.NewReader(in), 8<<10)
	r.KeepUnterminated = true
	var got []string
	for r.Next() {
		got = append(got, r.Event()+"|"+string(bytes.TrimSuffix(r.Data(), []byte("\n"))))
	}
	want := []string{"error|{\"a\":\n1}", "|[DONE]"}
	if fmt.Sprint(got) != fmt.Sprint(want) || r.Err() != nil {
		t.Errorf("events %q (err %v), want %q", got, r.Err(), want)
	}
}

// FuzzStream: whatever the body holds, in either API's format, reading it never panics; a reply
// it accepts is consistent with what the handler heard: message_start
// first, message_stop last, one Block per content block, every event's
// data valid JSON.
func FuzzStream(f *testing.F) {
	f.Add(sseOf(TextChunk("Hel"), TextChunk("lo"), FinishChunk("stop"), UsageChunk(3, 2, 1)), false)
	f.Add(sseOf(ReasoningChunk("hm"), ToolChunk(1, "b", "Bash", `{"x"`), ToolChunk(0, "a", "Read", `{}`), ToolChunk(1, "", "", `:1}`), FinishChunk("tool_calls")), false)
	f.Add(sseOf(`{"error":{"message":"boom"}}`), false)
	f.Add("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"x\",\"function\":{\"name\":\"n\",\"arguments\":\"[\"}}]},\"finish_reason\":\"stop\"}]}\n\n", false)
	f.Add("event: error\ndata: nope\n\n", false)
	f.Add("data: {\"choices\":[{\"delta\":{\"reasoning\":{\"x\":1},\"content\":null}}]}\n", false)
	f.Add(responsesSSE(`{"type":"response.created","response":{"id":"r"}}`, `{"type":"response.output_text.delta","delta":"a"}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"c","name":"n"}}`,
		`{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{}"}`,
		`{"type":"response.completed","response":{"usage":{"input_tokens":3}}}`), true)
	f.Fuzz(func(t *testing.T, body string, responses bool) {
		var h recorder
		s := &streamState{h: &h, model: "m", responses: responses, elapsed: func() time.Duration { return 0 }}
		resp, err := s.read(strings.NewReader(body))
		for _, ev := range h.events {
			if !bytesValidJSON(ev.Data) {
				t.Fatalf("event %s with invalid JSON %q", ev.Type, ev.Data)
			}
		}
		if err != nil {
			if resp != nil {
				t.Fatal("a reply and an error")
			}
			return
		}
		if len(h.events) < 2 || h.events[0].Type != "message_start" || h.events[len(h.events)-1].Type != "message_stop" {
			t.Fatalf("events %v", h.log)
		}
		if len(h.blocks) != len(resp.Content) {
			t.Fatalf("%d blocks reported, %d in the reply", len(h.blocks), len(resp.Content))
		}
		for _, c := range resp.Content {
			if _, err := c.MarshalJSON(); err != nil {
				t.Fatalf("block %+v does not marshal: %v", c, err)
			}
			if c.Type == model.TypeToolUse && (c.ID == "" || c.Name == "" || !bytesValidJSON(c.Input)) {
				t.Fatalf("tool_use block %+v", c)
			}
		}
	})
}

func bytesValidJSON(b []byte) bool {
	return len(bytes.TrimSpace(b)) > 0 && jsonValid(b)
}

func jsonValid(b []byte) bool { return json.Valid(b) }
