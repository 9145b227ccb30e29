package engine

import (
	"encoding/json"
	"sort"

	"github.com/agentloop/agentloop/message"
)

// closingEvents are the stream events the reference writes, with partial
// messages on, for a reply an interrupt cut short, after the marker and
// before the result: a content_block_stop for each block still open, a
// message_delta with no stop reason and the reply's starting usage, and a
// message_stop naming the blocks that never came (abandoned_blocks, from
// the number of blocks started). Nothing when the reply had not started
// or had already ended.
func (h *handler) closingEvents() []*message.StreamEvent {
	p := &h.partial
	head := p.head()
	if head.ID == "" || p.ended {
		return nil
	}
	r := h.r
	event := func(v any) *message.StreamEvent {
		b, _ := json.Marshal(v) // plain values always marshal
		return &message.StreamEvent{Event: b, SessionID: r.s.cfg.Env.SessionID,
			ParentToolUseID: r.s.cfg.ParentToolUseID, UUID: r.s.cfg.NewID(), APIMessageID: head.ID}
	}
	var out []*message.StreamEvent
	open := make([]int, 0, len(p.open))
	for i := range p.open {
		open = append(open, i)
	}
	sort.Ints(open)
	for _, i := range open {
		out = append(out, event(struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		}{"content_block_stop", i}))
	}
	usage := map[string]any{}
	_ = json.Unmarshal(head.Usage, &usage) // the message_start's usage, if any
	defaults := map[string]any{
		"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
		"output_tokens_details": map[string]any{"thinking_tokens": 0}, "iterations": []any{},
		"server_tool_use": map[string]any{"web_search_requests": 0, "web_fetch_requests": 0}, "fallback_credit": nil,
	}
	for k, v := range defaults {
		if _, ok := usage[k]; !ok {
			usage[k] = v
		}
	}
	out = append(out, event(struct {
		Type              string         `json:"type"`
		ContextManagement any            `json:"context_management"`
		Delta             map[string]any `json:"delta"`
		Usage             map[string]any `json:"usage"`
	}{"message_delta", nil, map[string]any{"container": nil, "stop_details": nil, "stop_reason": nil, "stop_sequence": nil}, usage}))
	stop := event(map[string]any{"type": "message_stop"})
	stop.AbandonedBlocks = &message.AbandonedBlocks{APIMessageID: head.ID, FromBlockIndex: p.started}
	return append(out, stop)
}
