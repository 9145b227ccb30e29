package agentloop

import (
	"context"
	"encoding/json"

	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/settings"
)

// CheckBypassAsRoot reports whether a process with effective user id
// euid and IS_SANDBOX value isSandbox may run in bypassPermissions: nil
// unless euid is 0 and isSandbox is not "1", else an error wrapping
// [ErrBypassAsRoot]. (A negative euid, as on Windows, is not root.) The
// CLI uses it to refuse --dangerously-skip-permissions before starting.
func CheckBypassAsRoot(euid int, isSandbox string) error {
	return conversation.CheckBypassAsRoot(euid, isSandbox)
}

// ClassifierModel is the model that judges tool calls in auto permission
// mode.
const ClassifierModel = conversation.ClassifierModel

// CanUseTool is asked about each tool call that no rule, mode or hook has
// decided. It may block until a person answers; it must return when ctx is
// done. An error denies the call and is shown to the model.
type CanUseTool func(ctx context.Context, req PermissionRequest) (PermissionResult, error)

// PermissionRequest describes a call that needs approval.
type PermissionRequest struct {
	ToolName  string
	Input     json.RawMessage
	ToolUseID string
	// Suggestions are permission updates that would let such calls run
	// without asking next time.
	Suggestions []PermissionUpdate
	// BlockedPath is the file path that needs approval, if any, when it
	// lies outside the working directories (Cwd and the additional
	// directories, those added during the session included); a path
	// inside them is not repeated here (it is in Input), as the
	// reference's blocked_path is not.
	BlockedPath string
	// DisplayName is the tool's name for people: the tool name for the
	// built-in and custom tools, empty for MCP tools (mcp__…).
	DisplayName string
	// Description says in a few words what the call does, for people:
	// for a file tool (Read, Write, Edit, MultiEdit, NotebookEdit) its
	// path, relative to Cwd when it lies inside it; for Bash the input's
	// description, or else its command; empty for other tools.
	Description string
	// DecisionReason says why the call was not decided by the rules.
	DecisionReason string
	// AgentID names the subagent that made the call; empty for the main
	// loop.
	AgentID string
}

// PermissionResult answers a PermissionRequest.
type PermissionResult struct {
	// Behavior is "allow" or "deny".
	Behavior string
	// UpdatedInput, when set on allow, replaces the call's input (it is
	// validated again).
	UpdatedInput json.RawMessage
	// UpdatedPermissions are applied on allow: rules added, replaced or
	// removed, the mode changed, directories added, in the session or in
	// the settings file of their destination.
	UpdatedPermissions []PermissionUpdate
	// Message is what the model is told on deny; Interrupt also ends the
	// run.
	Message   string
	Interrupt bool
}

// PermissionUpdate is a change of permissions, in the reference's wire form.
type PermissionUpdate = settings.PermissionUpdate

// Allow returns a PermissionResult that lets the call run as asked.
func Allow() PermissionResult { return PermissionResult{Behavior: string(vocab.Allow)} }

// Deny returns a PermissionResult that refuses the call, telling the model
// why.
func Deny(message string) PermissionResult {
	return PermissionResult{Behavior: string(vocab.Deny), Message: message}
}
