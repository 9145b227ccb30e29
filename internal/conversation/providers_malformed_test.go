package conversation_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

const msgStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-opus-5-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n"

func sse(events ...string) string { return msgStart + strings.Join(events, "") }

func ev(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

// Malformed replies end in a clear error result (after the provider's
// retries), never a panic or a hang; unknown event and block types are
// tolerated.
func TestMalformedResponses(t *testing.T) {
	end := ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`) +
		ev("message_stop", `{"type":"message_stop"}`)
	text := ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`) +
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	cases := []struct {
		name     string
		raw      string
		wantSub  string
		wantText string // in the result text or errors
		isError  bool
	}{
		{"bad JSON in an event", sse(ev("content_block_start", `{"type":"content_block_start","index":0,`)), "success", "malformed response stream", true},
		{"truncated stream", sse(text), "success", "malformed response stream", true},
		{"delta for a block that never started", sse(ev("content_block_delta", `{"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"x"}}`)) + end, "success", "malformed response stream", true},
		{"unknown event type", sse(ev("mystery", `{"type":"mystery"}`), text) + end, "success", "ok", false},
		{"unknown block type", sse(ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"hologram","shape":"cube"}}`),
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`)) + end, "success", "", false},
		{"not SSE at all", "this is not an event stream", "success", "malformed response stream", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			replies := repeat(agentlooptest.Reply{RawSSE: tc.raw}, 11)
			srv := agentlooptest.NewTB(t, replies...)
			opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}}
			msgs, err := agentloop.Query(context.Background(), "hi", opts).Collect()
			var re *agentloop.ResultError
			if tc.isError != errors.As(err, &re) {
				t.Fatalf("error = %v, want a ResultError: %v", err, tc.isError)
			}
			res, ok := msgs[len(msgs)-1].(*agentloop.ResultMessage)
			if !ok {
				t.Fatalf("last message is %T", msgs[len(msgs)-1])
			}
			detail := res.Text() + strings.Join(res.Errors, "\n")
			if res.Subtype != tc.wantSub || !strings.Contains(strings.ToLower(detail), tc.wantText) {
				t.Errorf("result %s %q, want %s containing %q", res.Subtype, detail, tc.wantSub, tc.wantText)
			}
		})
	}
}
