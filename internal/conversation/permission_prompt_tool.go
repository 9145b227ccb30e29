package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/internal/authorize"
	"github.com/agentloop/agentloop/internal/wire"
	"github.com/agentloop/agentloop/tool"
)

// askPromptTool is the CanUseTool of a session with
// Options.PermissionPromptTool: it calls that MCP tool with the call's
// tool_name, input and tool_use_id and reads its answer, one text block
// of JSON in the shape of a can_use_tool answer ({"behavior":"allow",
// "updatedInput":{...}} or {"behavior":"deny","message":"..."}). A
// missing tool, a failed call or an answer of another shape denies the
// call with a message naming the tool and what was wrong; only a
// cancelled ctx is returned as an error.
func (s *Session) askPromptTool(ctx context.Context, r authorize.Request) (authorize.Answer, error) {
	name := s.opts.PermissionPromptTool
	var t tool.Tool
	for _, c := range s.customAndMCPTools() {
		if c.Info().Name == name {
			t = c
			break
		}
	}
	deny := func(format string, a ...any) (authorize.Answer, error) {
		return authorize.Answer{Behavior: "deny", Message: fmt.Sprintf(format, a...)}, nil
	}
	if t == nil {
		return deny("Permission to use %s was denied: the permission prompt tool %s is not among the MCP servers' tools.", r.ToolName, name)
	}
	input := r.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	in, err := json.Marshal(struct {
		ToolName  string          `json:"tool_name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
	}{r.ToolName, input, r.ToolUseID})
	if err != nil {
		return deny("Permission to use %s was denied: its input could not be passed to %s: %v", r.ToolName, name, err)
	}
	res, err := t.Run(ctx, &tool.Call{ID: r.ToolUseID, Input: in, Env: s.env})
	if ctx.Err() != nil {
		return authorize.Answer{}, fmt.Errorf("permission prompt tool %s for %s: %w", name, r.ToolName, context.Cause(ctx))
	}
	if err != nil {
		return deny("Permission to use %s was denied: the permission prompt tool %s failed: %v", r.ToolName, name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		text.WriteString(c.ResultText())
	}
	if res.IsError {
		return deny("Permission to use %s was denied: the permission prompt tool %s answered with an error: %s", r.ToolName, name, text.String())
	}
	p, err := wire.DecodePermissionResult(json.RawMessage(text.String()))
	if err != nil {
		return deny("Permission to use %s was denied: the answer of the permission prompt tool %s is not a permission decision: %v", r.ToolName, name, err)
	}
	a := authorize.Answer{Behavior: p.Behavior, UpdatedInput: p.UpdatedInput, Message: p.Message, Interrupt: p.Interrupt}
	if len(p.UpdatedPermissions) > 0 {
		if err := json.Unmarshal(p.UpdatedPermissions, &a.UpdatedPermissions); err != nil {
			return deny("Permission to use %s was denied: the updatedPermissions of the permission prompt tool %s are malformed: %v", r.ToolName, name, err)
		}
	}
	return a, nil
}
