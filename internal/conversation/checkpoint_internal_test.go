package conversation

import (
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// TestPromptLineID: only a prompt's own user line of the main
// conversation starts a checkpoint.
func TestPromptLineID(t *testing.T) {
	parent := "toolu_1"
	user := func(synthetic bool, parentID *string, blocks ...model.Content) *message.User {
		return &message.User{UUID: "u", IsSynthetic: synthetic, ParentToolUseID: parentID,
			Message: message.UserContent{Role: "user", Content: blocks}}
	}
	for _, tc := range []struct {
		name string
		m    message.Message
		want bool
	}{
		{"prompt", user(false, nil, model.TextBlock("hi")), true},
		{"hook context", user(true, nil, model.TextBlock("ctx")), false},
		{"subagent prompt", user(false, &parent, model.TextBlock("sub")), false},
		{"tool result", user(false, nil, model.Content{Type: model.TypeToolResult, ToolUseID: "toolu_1"}), false},
		{"no uuid", &message.User{Message: message.UserContent{Role: "user", Content: []model.Content{model.TextBlock("x")}}}, false},
		{"assistant", &message.Assistant{}, false},
	} {
		if _, got := promptLineID(tc.m); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
