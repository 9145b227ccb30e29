package message

import (
	"encoding/json"

	"github.com/agentloop/agentloop/model"
)

// Assistant is one content block of a model reply. The blocks of one reply
// share Message.ID and Message.Usage (the usage known when the reply
// started; the final counts are on the Result).
type Assistant struct {
	Message         APIMessage `json:"message"`
	ParentToolUseID *string    `json:"parent_tool_use_id"`
	SessionID       string     `json:"session_id"`
	UUID            string     `json:"uuid"`
	Timestamp       string     `json:"timestamp,omitempty"`
	RequestID       string     `json:"request_id,omitempty"`
	// UserMessageUUIDs, on the messages of a reply that follows user
	// messages folded into the running turn (streaming input), are the
	// uuids of those messages, in the order they joined (at most 64).
	UserMessageUUIDs []string `json:"user_message_uuids,omitempty"`

	// Set on synthetic messages that report an API failure.
	Error             string `json:"error,omitempty"`
	IsAPIErrorMessage bool   `json:"is_api_error_message,omitempty"`
	APIErrorStatus    int    `json:"api_error_status,omitempty"`
	APIErrorType      string `json:"api_error_type,omitempty"`
	// Aborted marks the line of a reply cut short by an interrupt: it
	// holds the text streamed until then.
	Aborted bool `json:"aborted,omitempty"`
	// LocalCommandSource and LocalCommandRun are set on the message that
	// shows what a local slash command (/context, /model, …) printed:
	// its model is SyntheticModel and its text the command's output;
	// LocalCommandSource is that output in <local-command-stdout> tags,
	// as the history keeps it, and LocalCommandRun names the command.
	LocalCommandSource string           `json:"local_command_source,omitempty"`
	LocalCommandRun    *LocalCommandRun `json:"local_command_run,omitempty"`
}

// SyntheticModel is the model of assistant messages the loop writes
// itself (a local command's output, an API failure's text).
const SyntheticModel = "<synthetic>"

// LocalCommandRun names the local slash command an assistant message
// reports: its canonical name (no slash; an alias is resolved) and its
// arguments as typed.
type LocalCommandRun struct {
	Command string `json:"command"`
	Args    string `json:"args"`
}

// MarshalJSON writes the line with its type field.
func (a *Assistant) MarshalJSON() ([]byte, error) {
	type plain Assistant
	return withType("assistant", (*plain)(a))
}

// APIMessage is the model's reply as carried by an Assistant line.
type APIMessage struct {
	ID                string          `json:"id"`
	Type              string          `json:"type"`
	Role              string          `json:"role"`
	Model             string          `json:"model"`
	Content           []model.Content `json:"content"`
	StopReason        *string         `json:"stop_reason"`
	StopSequence      *string         `json:"stop_sequence"`
	Usage             model.Usage     `json:"usage"`
	ContextManagement json.RawMessage `json:"context_management"`
}

// Text returns the message's text blocks, concatenated.
func (m APIMessage) Text() string {
	s := ""
	for _, c := range m.Content {
		if c.Type == model.TypeText {
			s += c.Text
		}
	}
	return s
}

// User is a user turn: a tool result, a synthetic prompt, or (in streaming
// input) the host's prompt.
type User struct {
	Message         UserContent `json:"message"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`
	SessionID       string      `json:"session_id"`
	UUID            string      `json:"uuid,omitempty"`
	Timestamp       string      `json:"timestamp,omitempty"`
	// ToolUseResult is the tool's structured output (any JSON value), or
	// the error text for failed calls.
	ToolUseResult  any              `json:"tool_use_result,omitempty"`
	ToolResultMeta []ToolResultMeta `json:"tool_result_meta,omitempty"`
	IsSynthetic    bool             `json:"isSynthetic,omitempty"`
	// IsReplay marks a line that echoes what a local command (/compact)
	// printed; it reaches the stream, not the model.
	IsReplay bool `json:"isReplay,omitempty"`
	// Set on a subagent's prompt line.
	AgentID         string `json:"agent_id,omitempty"`
	SubagentType    string `json:"subagent_type,omitempty"`
	TaskDescription string `json:"task_description,omitempty"`
}

// MarshalJSON writes the line with its type field.
func (u *User) MarshalJSON() ([]byte, error) {
	type plain User
	return withType("user", (*plain)(u))
}

// UserContent is the API message of a user turn.
type UserContent struct {
	Role    string          `json:"role"`
	Content []model.Content `json:"content"`
}

// UnmarshalJSON accepts content as a string or a list of blocks.
func (c *UserContent) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	c.Role = raw.Role
	c.Content = nil
	if len(raw.Content) > 0 && raw.Content[0] == '"' {
		var s string
		if err := json.Unmarshal(raw.Content, &s); err != nil {
			return err
		}
		c.Content = []model.Content{model.TextBlock(s)}
		return nil
	}
	if len(raw.Content) == 0 || string(raw.Content) == "null" {
		return nil
	}
	return json.Unmarshal(raw.Content, &c.Content)
}

// ToolResultMeta records how a tool call was authorised.
type ToolResultMeta struct {
	ID string `json:"id"`
	// PermissionDecision is absent for a call an interrupt stopped.
	PermissionDecision PermissionDecision `json:"permission_decision,omitzero"`
	NonExecutionKind   string             `json:"non_execution_kind,omitempty"`
}

// PermissionDecision is the outcome of authorising one call.
type PermissionDecision struct {
	Decision   string `json:"decision"`    // accept or reject
	Source     string `json:"source"`      // config or hook
	ReasonType string `json:"reason_type"` // mode, rule, hook, …
}

// StreamEvent is a raw event of a streaming reply, emitted only when
// partial messages are requested.
type StreamEvent struct {
	Event           json.RawMessage `json:"event"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	UUID            string          `json:"uuid"`
	TTFTMs          *int64          `json:"ttft_ms,omitempty"`
	APIMessageID    string          `json:"api_message_id,omitempty"`
	// AbandonedBlocks is set on the message_stop written for a reply an
	// interrupt cut short: the blocks from FromBlockIndex on never came.
	AbandonedBlocks *AbandonedBlocks `json:"abandoned_blocks,omitempty"`
}

// AbandonedBlocks names the blocks of a cut reply that never came.
type AbandonedBlocks struct {
	APIMessageID   string `json:"api_message_id"`
	FromBlockIndex int    `json:"from_block_index"`
}

// MarshalJSON writes the line with its type field.
func (e *StreamEvent) MarshalJSON() ([]byte, error) {
	type plain StreamEvent
	return withType("stream_event", (*plain)(e))
}

// EventType returns the raw event's type field.
func (e *StreamEvent) EventType() string {
	var h struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(e.Event, &h)
	return h.Type
}

// withType marshals v and puts "type":t first.
func withType(t string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(t)+12)
	out = append(out, `{"type":"`...)
	out = append(out, t...)
	out = append(out, '"')
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}
