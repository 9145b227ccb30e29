package hooks

import (
	"encoding/json"
	"time"

	"github.com/agentloop/agentloop/settings"
)

// Event is a hook event name, as used in settings files and on the wire.
type Event string

// The events this package dispatches.
const (
	PreToolUse         Event = "PreToolUse"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	Notification       Event = "Notification"
	UserPromptSubmit   Event = "UserPromptSubmit"
	SessionStart       Event = "SessionStart"
	SessionEnd         Event = "SessionEnd"
	Stop               Event = "Stop"
	SubagentStart      Event = "SubagentStart"
	SubagentStop       Event = "SubagentStop"
	PreCompact         Event = "PreCompact"
	PostCompact        Event = "PostCompact"
	PermissionRequest  Event = "PermissionRequest"
)

// Events lists the dispatched events in the reference's order.
var Events = []Event{
	PreToolUse, PostToolUse, PostToolUseFailure, Notification, UserPromptSubmit, UserPromptExpansion,
	SessionStart, SessionEnd, Stop, SubagentStart, SubagentStop, PreCompact, PostCompact, PermissionRequest,
}

// DefaultTimeout is how long a hook may run, unless its matcher or
// settings entry says otherwise.
const DefaultTimeout = 600 * time.Second

// UserPromptSubmitTimeout is the default for UserPromptSubmit hooks.
const UserPromptSubmitTimeout = 30 * time.Second

// SessionEndBudget bounds all SessionEnd hooks together, whatever their
// own timeouts: the session is shutting down.
const SessionEndBudget = 1500 * time.Millisecond

// defaultTimeout is the timeout of a hook of ev that sets none.
func defaultTimeout(ev Event) time.Duration {
	switch ev {
	case UserPromptSubmit:
		return UserPromptSubmitTimeout
	case SessionEnd:
		return SessionEndBudget
	}
	return DefaultTimeout
}

// matchable reports whether matchers apply to ev; hooks of the other
// events always run.
func matchable(ev Event) bool { return ev != UserPromptSubmit && ev != Stop }

// Input is the JSON object a hook receives: one of the *Input types of
// this package (as a value, not a pointer). Hooks run concurrently and
// share the input: a callback must not modify it.
type Input interface {
	// EventName is the event the input is for.
	EventName() Event
	// target is what the event's matchers match against.
	target() string
}

// Base holds the fields every hook input has. The Dispatcher fills
// SessionID, TranscriptPath and Cwd from its Config when they are empty,
// and always sets HookEventName.
type Base struct {
	SessionID      string  `json:"session_id"`
	TranscriptPath string  `json:"transcript_path"`
	Cwd            string  `json:"cwd"`
	PromptID       string  `json:"prompt_id,omitempty"`
	PermissionMode string  `json:"permission_mode,omitempty"`
	AgentID        string  `json:"agent_id,omitempty"`   // only inside a subagent
	AgentType      string  `json:"agent_type,omitempty"` // only inside a subagent
	Effort         *Effort `json:"effort,omitempty"`
	HookEventName  Event   `json:"hook_event_name"`
}

// Effort is the effort level of the session's model requests.
type Effort struct {
	Level string `json:"level"`
}

// MCPServer names the MCP server of an MCP tool.
type MCPServer struct {
	Name   string `json:"name"`
	Source string `json:"source,omitempty"`
}

// PreToolUseInput is sent before a tool call is authorised and run.
type PreToolUseInput struct {
	Base
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	MCPServer *MCPServer      `json:"mcp_server,omitempty"`
}

// PostToolUseInput is sent after a tool call succeeded.
type PostToolUseInput struct {
	Base
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	// ToolResponse is the tool's output object (tool_use_result).
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	DurationMs   *int64          `json:"duration_ms,omitempty"`
	MCPServer    *MCPServer      `json:"mcp_server,omitempty"`
}

// PostToolUseFailureInput is sent after a tool call failed.
type PostToolUseFailureInput struct {
	Base
	ToolName    string          `json:"tool_name"`
	ToolInput   json.RawMessage `json:"tool_input"`
	ToolUseID   string          `json:"tool_use_id"`
	Error       string          `json:"error"`
	IsInterrupt bool            `json:"is_interrupt,omitempty"`
	DurationMs  *int64          `json:"duration_ms,omitempty"`
	MCPServer   *MCPServer      `json:"mcp_server,omitempty"`
}

// NotificationInput is sent when the session notifies the user.
type NotificationInput struct {
	Base
	Message string `json:"message"`
	Title   string `json:"title,omitempty"`
	// NotificationType is permission_prompt, idle_prompt, auth_success,
	// elicitation_dialog, … ; matchers match it.
	NotificationType string `json:"notification_type"`
}

// UserPromptSubmitInput is sent before a prompt goes to the model.
type UserPromptSubmitInput struct {
	Base
	Prompt string `json:"prompt"`
	// Source is user, sdk, system, loop_wakeup, schedule_wakeup or
	// poll_event.
	Source       string `json:"source,omitempty"`
	SessionTitle string `json:"session_title,omitempty"`
}

// SessionStartInput is sent when a session starts or resumes.
type SessionStartInput struct {
	Base
	// Source is startup, resume, clear, compact or fork; matchers match
	// it.
	Source       string `json:"source"`
	Model        string `json:"model,omitempty"`
	SessionTitle string `json:"session_title,omitempty"`
}

// SessionEndInput is sent when a session ends.
type SessionEndInput struct {
	Base
	// Reason is clear, resume, logout, prompt_input_exit or other;
	// matchers match it.
	Reason string `json:"reason"`
}

// StopInput is sent when the main agent is about to end its turn.
type StopInput struct {
	Base
	// StopHookActive is true when the turn goes on because a Stop hook
	// blocked the previous stop.
	StopHookActive       bool             `json:"stop_hook_active"`
	LastAssistantMessage string           `json:"last_assistant_message,omitempty"`
	BackgroundTasks      []BackgroundTask `json:"background_tasks,omitempty"`
	SessionCrons         []SessionCron    `json:"session_crons,omitempty"`
}

// BackgroundTask summarises a task still running when the agent stops.
type BackgroundTask struct {
	ID          string `json:"id"`
	Type        string `json:"type"` // shell, subagent, monitor, workflow, …
	Status      string `json:"status"`
	Description string `json:"description"`
	Command     string `json:"command,omitempty"`
	AgentType   string `json:"agent_type,omitempty"`
	Server      string `json:"server,omitempty"`
	Tool        string `json:"tool,omitempty"`
	Name        string `json:"name,omitempty"`
}

// SessionCron summarises a scheduled prompt of the session.
type SessionCron struct {
	ID        string `json:"id"`
	Schedule  string `json:"schedule"`
	Recurring bool   `json:"recurring"`
	Prompt    string `json:"prompt"`
}

// SubagentStartInput is sent when a subagent starts. AgentID and
// AgentType name the new subagent (they shadow the Base fields, which
// name the agent the hook runs in, if it is itself a subagent).
type SubagentStartInput struct {
	Base
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
}

// SubagentStopInput is sent when a subagent is about to finish.
type SubagentStopInput struct {
	Base
	StopHookActive       bool             `json:"stop_hook_active"`
	AgentID              string           `json:"agent_id"`
	AgentTranscriptPath  string           `json:"agent_transcript_path"`
	AgentType            string           `json:"agent_type"`
	LastAssistantMessage string           `json:"last_assistant_message,omitempty"`
	BackgroundTasks      []BackgroundTask `json:"background_tasks,omitempty"`
	SessionCrons         []SessionCron    `json:"session_crons,omitempty"`
}

// PreCompactInput is sent before the conversation is compacted.
type PreCompactInput struct {
	Base
	// Trigger is manual or auto; matchers match it.
	Trigger string `json:"trigger"`
	// CustomInstructions are the /compact instructions; nil is JSON null.
	CustomInstructions *string `json:"custom_instructions"`
}

// PostCompactInput is sent after the conversation was compacted.
type PostCompactInput struct {
	Base
	// Trigger is manual or auto; matchers match it.
	Trigger string `json:"trigger"`
	// CompactSummary is the summary that replaced the conversation.
	CompactSummary string `json:"compact_summary"`
}

// PermissionRequestInput is sent when a tool call is about to be put to
// the user (or the permission callback) for approval.
type PermissionRequestInput struct {
	Base
	ToolName              string                      `json:"tool_name"`
	ToolInput             json.RawMessage             `json:"tool_input"`
	PermissionSuggestions []settings.PermissionUpdate `json:"permission_suggestions,omitempty"`
	MCPServer             *MCPServer                  `json:"mcp_server,omitempty"`
	// ToolUseID is passed to callbacks but is not part of the JSON.
	ToolUseID string `json:"-"`
}

// EventName is PreToolUse.
func (PreToolUseInput) EventName() Event { return PreToolUse }

// EventName is PostToolUse.
func (PostToolUseInput) EventName() Event { return PostToolUse }

// EventName is PostToolUseFailure.
func (PostToolUseFailureInput) EventName() Event { return PostToolUseFailure }

// EventName is Notification.
func (NotificationInput) EventName() Event { return Notification }

// EventName is UserPromptSubmit.
func (UserPromptSubmitInput) EventName() Event { return UserPromptSubmit }

// EventName is SessionStart.
func (SessionStartInput) EventName() Event { return SessionStart }

// EventName is SessionEnd.
func (SessionEndInput) EventName() Event { return SessionEnd }

// EventName is Stop.
func (StopInput) EventName() Event { return Stop }

// EventName is SubagentStart.
func (SubagentStartInput) EventName() Event { return SubagentStart }

// EventName is SubagentStop.
func (SubagentStopInput) EventName() Event { return SubagentStop }

// EventName is PreCompact.
func (PreCompactInput) EventName() Event { return PreCompact }

// EventName is PostCompact.
func (PostCompactInput) EventName() Event { return PostCompact }

// EventName is PermissionRequest.
func (PermissionRequestInput) EventName() Event { return PermissionRequest }

func (in PreToolUseInput) target() string         { return in.ToolName }
func (in PostToolUseInput) target() string        { return in.ToolName }
func (in PostToolUseFailureInput) target() string { return in.ToolName }
func (in NotificationInput) target() string       { return in.NotificationType }
func (in UserPromptSubmitInput) target() string   { return "" }
func (in SessionStartInput) target() string       { return in.Source }
func (in SessionEndInput) target() string         { return in.Reason }
func (in StopInput) target() string               { return "" }
func (in SubagentStartInput) target() string      { return in.AgentType }
func (in SubagentStopInput) target() string       { return in.AgentType }
func (in PreCompactInput) target() string         { return in.Trigger }
func (in PostCompactInput) target() string        { return in.Trigger }
func (in PermissionRequestInput) target() string  { return in.ToolName }

// toolUseID is the id passed to callbacks along with the input.
func toolUseID(in Input) string {
	switch v := in.(type) {
	case PreToolUseInput:
		return v.ToolUseID
	case PostToolUseInput:
		return v.ToolUseID
	case PostToolUseFailureInput:
		return v.ToolUseID
	case PermissionRequestInput:
		return v.ToolUseID
	}
	return ""
}
