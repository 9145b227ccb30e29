package engine

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
)

// TestPartialReplyQuickAndGeneral: the partial reply kept for an interrupt
// is the same whether its events come in the API's compact shapes (read by
// hand, internal/quickev) or in shapes only encoding/json reads (spaces,
// other key orders, \u escapes).
func TestPartialReplyQuickAndGeneral(t *testing.T) {
	compact := []model.StreamEvent{
		{Type: "message_start", Data: json.RawMessage(`{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":3}}}`)},
		{Type: "content_block_start", Data: json.RawMessage(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"He"}}`)},
		{Type: "content_block_delta", Data: json.RawMessage(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"llo\n"}}`)},
		{Type: "content_block_stop", Data: json.RawMessage(`{"type":"content_block_stop","index":0}`)},
		{Type: "content_block_start", Data: json.RawMessage(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"Read","input":{}}}`)},
		{Type: "content_block_delta", Data: json.RawMessage(`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a"}}`)},
		{Type: "content_block_start", Data: json.RawMessage(`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`)},
		{Type: "content_block_delta", Data: json.RawMessage(`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"cut \"here\""}}`)},
	}
	general := []model.StreamEvent{
		compact[0],
		{Type: "content_block_start", Data: json.RawMessage(`{ "index": 0, "type": "content_block_start", "content_block": {"text": "He", "type": "text"} }`)},
		{Type: "content_block_delta", Data: json.RawMessage(`{"delta":{"text":"llo\u000a","type":"text_delta"},"index":0,"type":"content_block_delta"}`)},
		{Type: "content_block_stop", Data: json.RawMessage(`{"index":0,"type":"content_block_stop"}`)},
		{Type: "content_block_start", Data: json.RawMessage(`{"index":1,"type":"content_block_start","content_block":{"input":{},"name":"Read","id":"t","type":"tool_use"}}`)},
		{Type: "content_block_delta", Data: json.RawMessage(`{"index":1,"type":"content_block_delta","delta":{"partial_json":"{\"a","type":"input_json_delta"}}`)},
		{Type: "content_block_start", Data: json.RawMessage(`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"","Type":"text"}}`)},
		{Type: "content_block_delta", Data: json.RawMessage(`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"cut \u0022here\""}}`)},
	}
	state := func(evs []model.StreamEvent) map[string]any {
		var p partialReply
		for _, ev := range evs {
			p.event(ev)
		}
		text := map[int]string{}
		for i, b := range p.text {
			text[i] = b.String()
		}
		return map[string]any{"text": text, "open": p.open, "started": p.started, "id": p.head().ID}
	}
	want := map[string]any{"text": map[int]string{2: "cut \"here\""}, "open": map[int]bool{1: true, 2: true}, "started": 3, "id": "msg_1"}
	for name, evs := range map[string][]model.StreamEvent{"compact": compact, "general": general} {
		got := state(evs)
		// Block 0 stopped: its text stays until done() forgets it.
		delete(got["text"].(map[int]string), 0)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s events (-want +got):\n%s", name, d)
		}
	}
	if d := cmp.Diff(state(general), state(compact)); d != "" {
		t.Errorf("compact and general shapes differ (-general +compact):\n%s", d)
	}
}
