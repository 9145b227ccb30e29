package session

import (
	"encoding/json"
	"time"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/google/uuid"
)

// Timestamp formats t as transcripts do: ISO 8601, UTC, milliseconds.
func Timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// PromptEntry returns the user entry of a prompt given as text. id is the
// uuid of the prompt's user message ("" for a new one); permissionMode is
// the session's permission mode when the prompt was sent.
func PromptEntry(id, prompt, permissionMode string) Entry {
	return Entry{
		Type: TypeUser, UUID: newID(id), PermissionMode: permissionMode,
		Message: &Message{Role: "user", Content: []model.Content{model.TextBlock(prompt)}, StringContent: true},
	}
}

// UserEntry returns the entry of a user stream message: a prompt, a
// synthetic (meta) message, or a tool result.
//
// A prompt made of one text block is written with string content, as the
// reference does. A message with tool_result blocks is written as a list
// with its tool_use_result as toolUseResult; the Writer fills in
// sourceToolAssistantUUID. permissionMode is recorded on prompts only.
func UserEntry(u *message.User, permissionMode string) Entry {
	e := Entry{Type: TypeUser, UUID: newID(u.UUID), Timestamp: u.Timestamp, IsMeta: u.IsSynthetic}
	msg := &Message{Role: "user", Content: cloneContents(u.Message.Content)}
	if msg.Content == nil {
		msg.Content = []model.Content{}
	}
	results := false
	for _, c := range msg.Content {
		if c.Type == model.TypeToolResult {
			results = true
		}
	}
	switch {
	case results:
		if u.ToolUseResult != nil {
			if b, err := json.Marshal(u.ToolUseResult); err == nil {
				e.ToolUseResult = b
			}
		}
	default:
		// A prompt of one text block is written as a string, as the
		// reference writes it; an interrupt's marker line stays a list of
		// one text block, as the reference's.
		if len(msg.Content) == 1 && msg.Content[0].Type == model.TypeText && msg.Content[0].CacheControl == nil &&
			msg.Content[0].Text != interruptMarker && msg.Content[0].Text != interruptToolMarker {
			msg.StringContent = true
		}
		if !u.IsSynthetic {
			e.PermissionMode = permissionMode
		}
	}
	e.Message = msg
	return e
}

// AssistantEntry returns the entry of an assistant stream message: one
// content block of a reply, with the reply's id, model, stop reason and
// usage, and the request id. Synthetic API-error messages keep their error
// fields.
func AssistantEntry(a *message.Assistant) Entry {
	m := a.Message
	msg := &Message{
		ID: m.ID, Type: orDefault(m.Type, "message"), Role: "assistant", Model: m.Model,
		Content: cloneContents(m.Content), StopReason: clonePtr(m.StopReason),
		StopSequence: clonePtr(m.StopSequence),
	}
	if msg.Content == nil {
		msg.Content = []model.Content{}
	}
	msg.Usage = usageJSON(&m.Usage)
	if len(m.ContextManagement) > 0 {
		msg.Extra = map[string]json.RawMessage{"context_management": compact(m.ContextManagement)}
	}
	e := Entry{Type: TypeAssistant, UUID: newID(a.UUID), Timestamp: a.Timestamp,
		RequestID: a.RequestID, Message: msg, IsAPIErrorMessage: a.IsAPIErrorMessage}
	x := map[string]json.RawMessage{}
	if a.Error != "" {
		x["error"] = mustJSON(a.Error)
	}
	if a.APIErrorStatus != 0 {
		x["apiErrorStatus"] = mustJSON(a.APIErrorStatus)
	}
	if a.APIErrorType != "" {
		x["apiErrorType"] = mustJSON(a.APIErrorType)
	}
	if len(x) > 0 {
		e.Extra = x
	}
	return e
}

// APIErrorEntry returns the system entry the reference writes before it
// retries a failed request.
func APIErrorEntry(r model.RetryInfo) Entry {
	msg := ""
	if r.Err != nil {
		msg = r.Err.Error()
	}
	errObj := map[string]any{"message": msg}
	if r.Status != 0 {
		errObj["status"] = r.Status
	}
	var apiErr *model.APIError
	if ae, ok := r.Err.(*model.APIError); ok {
		apiErr = ae
	}
	if apiErr != nil && apiErr.RequestID != "" {
		errObj["requestId"] = apiErr.RequestID
	}
	return Entry{
		Type: TypeSystem, Subtype: SubtypeAPIError, Level: "error", UUID: uuid.NewString(),
		Extra: map[string]json.RawMessage{
			"error":        mustJSON(errObj),
			"retryInMs":    mustJSON(r.Delay.Milliseconds()),
			"retryAttempt": mustJSON(r.Attempt),
			"maxRetries":   mustJSON(r.MaxRetries),
			"source":       mustJSON("request_retry"),
		},
	}
}

// CompactBoundaryEntry returns the system entry that starts the chain anew
// after a compaction. logicalParent is the last entry before it; the Writer
// does not link the boundary to it (parentUuid stays null), so a rebuilt
// history starts at the boundary. Append the summary as a user entry with
// IsCompactSummary set right after it.
func CompactBoundaryEntry(trigger string, preTokens int64, logicalParent string) Entry {
	return Entry{
		Type: TypeSystem, Subtype: SubtypeCompactBoundary, Level: "info", UUID: uuid.NewString(),
		LogicalParentUUID: logicalParent,
		Extra: map[string]json.RawMessage{
			"content":         mustJSON("Conversation compacted"),
			"compactMetadata": mustJSON(map[string]any{"trigger": trigger, "preTokens": preTokens}),
		},
	}
}

// LastPromptEntry returns the last-prompt entry written after each turn.
// leafUUID "" lets the Writer fill in the chain's current leaf.
func LastPromptEntry(prompt, leafUUID string) Entry {
	return Entry{Type: TypeLastPrompt, LastPrompt: prompt, LeafUUID: leafUUID}
}

// CostStateEntry returns the cost-state entry that records the session's
// running totals; the last one is restored on resume.
func CostStateEntry(c CostState) Entry {
	cc := c
	return Entry{Type: TypeCostState, Cost: &cc}
}

// CostFromResult returns the totals of a result message. startTime is when
// the session (or its first process) started.
func CostFromResult(r *message.Result, startTime time.Time) CostState {
	mu := make(map[string]message.ModelUsage, len(r.ModelUsage))
	unknown := false
	for k, v := range r.ModelUsage {
		mu[k] = v
		unknown = unknown || v.CostUnknown
	}
	return CostState{
		HasUnknownModelCost:            unknown,
		TotalCostUSD:                   r.TotalCostUSD,
		TotalAPIDuration:               float64(r.DurationAPIMs),
		TotalAPIDurationWithoutRetries: float64(r.DurationAPIMs),
		TotalDuration:                  float64(r.DurationMs),
		StartTime:                      startTime.UnixMilli(),
		ModelUsage:                     mu,
	}
}

// CustomTitleEntry returns the entry that names a session.
func CustomTitleEntry(sessionID, title string) Entry {
	return Entry{Type: TypeCustomTitle, CustomTitle: title, SessionID: sessionID}
}

// TagEntry returns the entry that tags a session ("" clears the tag).
func TagEntry(sessionID, tag string) Entry {
	return Entry{Type: TypeTag, Tag: tag, SessionID: sessionID}
}

// SummaryEntry returns a summary entry for the conversation ending at
// leafUUID.
func SummaryEntry(summary, leafUUID string) Entry {
	return Entry{Type: TypeSummary, Summary: summary, LeafUUID: leafUUID}
}

func newID(id string) string {
	if id == "" {
		return uuid.NewString()
	}
	return id
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
