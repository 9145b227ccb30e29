package model

import (
	"encoding/json"
	"fmt"
)

// Server-side context management (the Messages API's context_management
// field, beta [ContextManagementBeta]): the API edits the context it was
// sent before the model sees it, and the client's history stays whole.

// ContextManagementBeta is the anthropic-beta value the context_management
// field needs.
const ContextManagementBeta = "context-management-2025-06-27"

// The edits the API offers.
const (
	// EditClearToolUses clears the results (and optionally inputs) of old
	// tool calls once the context passes a trigger.
	EditClearToolUses = "clear_tool_uses_20250919"
	// EditClearThinking clears the thinking blocks of old assistant turns.
	EditClearThinking = "clear_thinking_20251015"
)

// ContextManagement is the request's context_management object.
type ContextManagement struct {
	Edits []ContextEdit `json:"edits"`
}

// ContextEdit is one edit strategy. Type is [EditClearToolUses] or
// [EditClearThinking]; the other fields apply as documented and are left out
// of the JSON when zero, so the API's defaults hold.
type ContextEdit struct {
	Type string `json:"type"`
	// Trigger (clear_tool_uses) is when clearing starts: {input_tokens, N}
	// or {tool_uses, N}.
	Trigger *ContextAmount `json:"trigger,omitempty"`
	// Keep is what survives: for clear_tool_uses {tool_uses, N} (the most
	// recent N calls); for clear_thinking {thinking_turns, N} or {all}.
	Keep *ContextAmount `json:"keep,omitempty"`
	// ClearAtLeast (clear_tool_uses) is {input_tokens, N}: edit only when
	// at least N tokens go.
	ClearAtLeast *ContextAmount `json:"clear_at_least,omitempty"`
	// ExcludeTools (clear_tool_uses) names tools whose calls are never
	// cleared.
	ExcludeTools []string `json:"exclude_tools,omitempty"`
	// ClearAllToolInputs (clear_tool_uses) clears the inputs of cleared
	// calls too; ClearToolInputs clears them only for the tools named.
	// Set one or neither.
	ClearAllToolInputs bool     `json:"-"`
	ClearToolInputs    []string `json:"-"`
}

// ContextAmount is a typed amount: Type is input_tokens, tool_uses,
// thinking_turns or all (which has no value).
type ContextAmount struct {
	Type  string `json:"type"`
	Value int64  `json:"value,omitempty"`
}

// MarshalJSON writes clear_tool_inputs as the API's bool-or-list union.
func (e ContextEdit) MarshalJSON() ([]byte, error) {
	type plain ContextEdit
	var inputs any
	switch {
	case len(e.ClearToolInputs) > 0:
		inputs = e.ClearToolInputs
	case e.ClearAllToolInputs:
		inputs = true
	}
	return json.Marshal(struct {
		plain
		ClearToolInputs any `json:"clear_tool_inputs,omitempty"`
	}{plain(e), inputs})
}

// MarshalJSON writes {all} as the bare string "all", the form the API takes
// for clear_thinking's keep; every other amount is {type, value}.
func (a ContextAmount) MarshalJSON() ([]byte, error) {
	if a.Type == "all" && a.Value == 0 {
		return []byte(`"all"`), nil
	}
	type plain ContextAmount
	return json.Marshal(plain(a))
}

// UnmarshalJSON reads both forms: the object and the bare string "all".
func (a *ContextAmount) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("context amount: %w", err)
		}
		if s != "all" {
			return fmt.Errorf("context amount: the only string form is \"all\", not %q", s)
		}
		*a = ContextAmount{Type: "all"}
		return nil
	}
	type plain ContextAmount
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("context amount: %w", err)
	}
	*a = ContextAmount(p)
	return nil
}
