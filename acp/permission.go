package acp

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/settings"
	sdk "github.com/coder/acp-go-sdk"
)

// The permission options offered for every call.
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optReject      = "reject"
)

// canUseTool asks the editor about a call no rule, mode or hook decided:
// allow once, allow always (the loop's suggestions, else a session rule
// for the tool) or reject. A cancelled request (the prompt was cancelled)
// denies the call and stops the turn.
func (s *session) canUseTool(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
	s.startTool(ctx, req.ToolUseID, req.ToolName, req.Input)
	v := viewOf(req.ToolName, req.Input, s.cwd, s.fileReader(ctx))
	resp, err := s.agent.peer.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(s.id),
		ToolCall: sdk.ToolCallUpdate{
			ToolCallId: sdk.ToolCallId(req.ToolUseID),
			Title:      sdk.Ptr(v.title),
			Kind:       sdk.Ptr(v.kind),
			Status:     sdk.Ptr(sdk.ToolCallStatusPending),
			Locations:  v.locations,
			Content:    v.content,
			RawInput:   rawJSON(req.Input),
		},
		Options: []sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Always allow", OptionId: optAllowAlways},
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: optAllowOnce},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: optReject},
		},
	})
	if err != nil {
		return agentloop.PermissionResult{}, fmt.Errorf("asking the editor for permission: %w", err)
	}
	if resp.Outcome.Selected == nil {
		r := agentloop.Deny("The user cancelled the request.")
		r.Interrupt = true
		return r, nil
	}
	switch resp.Outcome.Selected.OptionId {
	case optAllowOnce:
		return agentloop.Allow(), nil
	case optAllowAlways:
		r := agentloop.Allow()
		r.UpdatedPermissions = alwaysAllow(req)
		return r, nil
	case optReject:
		return agentloop.Deny("The user rejected this tool call."), nil
	}
	return agentloop.PermissionResult{}, fmt.Errorf("the editor chose an unknown permission option %q", resp.Outcome.Selected.OptionId)
}

// alwaysAllow returns the updates of "allow always": the loop's
// suggestions for the session, or else a session rule allowing the tool.
func alwaysAllow(req agentloop.PermissionRequest) []agentloop.PermissionUpdate {
	var out []agentloop.PermissionUpdate
	for _, u := range req.Suggestions {
		u.Destination = settings.Session
		out = append(out, u)
	}
	if len(out) > 0 {
		return out
	}
	return []agentloop.PermissionUpdate{{Type: settings.AddRules, Behavior: settings.Allow,
		Rules: []settings.RuleValue{{ToolName: req.ToolName}}, Destination: settings.Session}}
}
