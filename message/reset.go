package message

// ConversationReset is the conversation_reset line: the conversation of
// the stream ended (a /clear) and a new one, with its own session id,
// starts in the same session. Every message after it carries
// NewConversationID as its session_id, and the running cost totals
// restart from zero.
type ConversationReset struct {
	// NewConversationID is the session id of the conversation that
	// starts.
	NewConversationID string `json:"new_conversation_id"`
	// Trigger is what reset the conversation: clear, plan_mode_exit,
	// fresh_session or onboarding.
	Trigger         string `json:"trigger,omitempty"`
	UserMessageUUID string `json:"user_message_uuid,omitempty"`
	Timestamp       string `json:"timestamp,omitempty"`
	// SessionID is the id of the conversation that ended.
	SessionID string `json:"session_id"`
	UUID      string `json:"uuid"`
}

// ResetTriggerClear is the Trigger of a reset by /clear.
const ResetTriggerClear = "clear"

// Kind is conversation_reset.
func (*ConversationReset) Kind() string { return "conversation_reset" }
func (*ConversationReset) isMessage()   {}

// MarshalJSON writes the line with its type field.
func (c *ConversationReset) MarshalJSON() ([]byte, error) {
	type plain ConversationReset
	return withType("conversation_reset", (*plain)(c))
}
