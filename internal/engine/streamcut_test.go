package engine

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

// TestClosingEvents pins which events close a reply an interrupt cut
// short: a stop for each open block, the delta, and a message_stop whose
// abandoned blocks start after the blocks started; nothing for a reply
// that never started or already ended.
func TestClosingEvents(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":7,"output_tokens":1}}}`
	text0 := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	delta0 := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`
	stop0 := `{"type":"content_block_stop","index":0}`
	tool1 := `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}`
	tests := []struct {
		name   string
		events []string
		want   []string
	}{
		{"text cut", []string{start, text0, delta0}, []string{"content_block_stop 0", "message_delta in=7", "message_stop from 1"}},
		{"no block yet", []string{start}, []string{"message_delta in=7", "message_stop from 0"}},
		{"tool call cut after a text", []string{start, text0, delta0, stop0, tool1},
			[]string{"content_block_stop 1", "message_delta in=7", "message_stop from 2"}},
		{"not started", nil, nil},
		{"ended", []string{start, text0, stop0, `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, `{"type":"message_stop"}`}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &handler{r: &run{s: newSession(t, &scripted{})}}
			for _, e := range tc.events {
				var typ struct {
					Type string `json:"type"`
				}
				if err := json.Unmarshal([]byte(e), &typ); err != nil {
					t.Fatal(err)
				}
				h.partial.event(model.StreamEvent{Type: typ.Type, Data: json.RawMessage(e)})
			}
			var got []string
			for _, ev := range h.closingEvents() {
				var e struct {
					Type  string `json:"type"`
					Index int    `json:"index"`
					Delta struct {
						StopReason *string `json:"stop_reason"`
					} `json:"delta"`
					Usage struct {
						Input int `json:"input_tokens"`
					} `json:"usage"`
				}
				if err := json.Unmarshal(ev.Event, &e); err != nil {
					t.Fatal(err)
				}
				if ev.APIMessageID != "msg_1" {
					t.Errorf("api_message_id %q", ev.APIMessageID)
				}
				switch e.Type {
				case "content_block_stop":
					got = append(got, fmt.Sprintf("%s %d", e.Type, e.Index))
				case "message_delta":
					if e.Delta.StopReason != nil {
						t.Errorf("stop_reason %q, want null", *e.Delta.StopReason)
					}
					got = append(got, fmt.Sprintf("%s in=%d", e.Type, e.Usage.Input))
				case "message_stop":
					got = append(got, fmt.Sprintf("%s from %d", e.Type, ev.AbandonedBlocks.FromBlockIndex))
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("closing events (-want +got):\n%s", d)
			}
		})
	}
}
