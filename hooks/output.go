package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/settings"
)

// Decision is a permission decision of a PreToolUse hook, and the merged
// decision of all of them.
type Decision string

// The permission decisions. Across several hooks the strongest wins:
// Deny > Defer > Ask > Allow > None.
const (
	None  Decision = ""
	Allow Decision = "allow"
	Deny  Decision = "deny"
	Ask   Decision = "ask"
	Defer Decision = "defer"
)

func (d Decision) rank() int {
	switch d {
	case Allow:
		return 1
	case Ask:
		return 2
	case Defer:
		return 3
	case Deny:
		return 5 // 4 is a hook that timed out: it denies, but an explicit deny's reason wins
	}
	return 0
}

// Output is what a hook returns: a Go callback's return value, or the
// JSON object a command hook prints on stdout when it exits 0. Every field
// is optional; the zero Output changes nothing.
type Output struct {
	// Halt stops the run after this hook point (JSON "continue": false).
	// It takes precedence over every decision of the event. It has no
	// effect for Notification, PreCompact and SessionEnd.
	Halt bool `json:"-"`
	// StopReason is shown to the user (not the model) when Halt is set.
	StopReason string `json:"stopReason,omitempty"`
	// SuppressOutput is accepted for compatibility and has no effect, as
	// in the reference.
	SuppressOutput bool `json:"suppressOutput,omitempty"`
	// SystemMessage is a warning for the user.
	SystemMessage string `json:"systemMessage,omitempty"`
	// Decision "block" blocks the event's action (see the result types);
	// "approve" is the deprecated PreToolUse spelling of allow, and
	// "block" there means deny.
	Decision string `json:"decision,omitempty"`
	// Reason explains a block: to the model for PostToolUse,
	// PostToolUseFailure, Stop and SubagentStop, to the user for
	// UserPromptSubmit and PreCompact.
	Reason string `json:"reason,omitempty"`
	// Async says the hook finished its work in the background: the
	// output has no effect.
	Async bool `json:"async,omitempty"`
	// HookSpecificOutput carries the event's own fields.
	HookSpecificOutput *HookSpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// HookSpecificOutput holds the event-specific output fields. Each is read
// only for the events named in its comment and ignored for the others.
type HookSpecificOutput struct {
	// HookEventName must be the event the hook ran for, when set.
	HookEventName Event `json:"hookEventName"`

	// PermissionDecision (PreToolUse) is allow, deny, ask or defer, with
	// PermissionDecisionReason shown to the model for deny and to the
	// user otherwise.
	PermissionDecision       Decision `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string   `json:"permissionDecisionReason,omitempty"`
	// UpdatedInput (PreToolUse) replaces the tool's whole input; it is
	// used with allow, ask or no decision, and ignored with deny or
	// defer.
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	// AdditionalContext (all events but SessionEnd and PreCompact) is
	// added to the conversation for the model, in a system reminder.
	AdditionalContext string `json:"additionalContext,omitempty"`
	// UpdatedToolOutput (PostToolUse) replaces the tool's output; for a
	// built-in tool it must have the tool's output shape.
	// UpdatedMCPToolOutput is its deprecated name.
	UpdatedToolOutput    json.RawMessage `json:"updatedToolOutput,omitempty"`
	UpdatedMCPToolOutput json.RawMessage `json:"updatedMCPToolOutput,omitempty"`
	// SessionTitle (UserPromptSubmit, SessionStart) names the session.
	SessionTitle string `json:"sessionTitle,omitempty"`
	// SuppressOriginalPrompt (UserPromptSubmit) keeps the prompt from the
	// transcript display.
	SuppressOriginalPrompt bool `json:"suppressOriginalPrompt,omitempty"`
	// InitialUserMessage (SessionStart) is a first prompt for the
	// session.
	InitialUserMessage string `json:"initialUserMessage,omitempty"`
	// Decision (PermissionRequest) answers the permission prompt.
	Decision *PermissionRequestDecision `json:"decision,omitempty"`
}

// PermissionRequestDecision answers a permission prompt on the user's
// behalf.
type PermissionRequestDecision struct {
	// Behavior is allow or deny.
	Behavior string `json:"behavior"`
	// UpdatedInput (allow) replaces the tool input; UpdatedPermissions
	// (allow) are rule changes to apply, as "always allow" does.
	UpdatedInput       json.RawMessage             `json:"updatedInput,omitempty"`
	UpdatedPermissions []settings.PermissionUpdate `json:"updatedPermissions,omitempty"`
	// Message (deny) is told to the model; Interrupt (deny) also stops
	// the turn.
	Message   string `json:"message,omitempty"`
	Interrupt bool   `json:"interrupt,omitempty"`
}

// outputJSON is Output with its wire field for Halt.
type outputJSON struct {
	Continue *bool `json:"continue,omitempty"`
	outputFields
}

type outputFields Output

// MarshalJSON writes the wire form, with "continue": false for Halt.
func (o Output) MarshalJSON() ([]byte, error) {
	w := outputJSON{outputFields: outputFields(o)}
	if o.Halt {
		f := false
		w.Continue = &f
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the wire form. Unknown fields are ignored; a known
// field of the wrong type is an error.
func (o *Output) UnmarshalJSON(b []byte) error {
	var w outputJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*o = Output(w.outputFields)
	o.Halt = w.Continue != nil && !*w.Continue
	return nil
}

// validate checks o for a hook of ev and drops JSON nulls.
func (o *Output) validate(ev Event) error {
	switch o.Decision {
	case "", "block", "approve":
	default:
		return fmt.Errorf("decision %q is not block or approve", o.Decision)
	}
	h := o.HookSpecificOutput
	if h == nil {
		return nil
	}
	if h.HookEventName != "" && h.HookEventName != ev {
		return fmt.Errorf("hookSpecificOutput.hookEventName is %q, not %q", h.HookEventName, ev)
	}
	switch h.PermissionDecision {
	case None, Allow, Deny, Ask, Defer:
	default:
		return fmt.Errorf("hookSpecificOutput.permissionDecision %q is not allow, deny, ask or defer", h.PermissionDecision)
	}
	h.UpdatedInput = dropNull(h.UpdatedInput)
	h.UpdatedToolOutput = dropNull(h.UpdatedToolOutput)
	h.UpdatedMCPToolOutput = dropNull(h.UpdatedMCPToolOutput)
	if h.UpdatedInput != nil && !isObject(h.UpdatedInput) {
		return fmt.Errorf("hookSpecificOutput.updatedInput is not an object")
	}
	if d := h.Decision; d != nil {
		if d.Behavior != string(vocab.Allow) && d.Behavior != string(vocab.Deny) {
			return fmt.Errorf("hookSpecificOutput.decision.behavior %q is not allow or deny", d.Behavior)
		}
		d.UpdatedInput = dropNull(d.UpdatedInput)
		if d.UpdatedInput != nil && !isObject(d.UpdatedInput) {
			return fmt.Errorf("hookSpecificOutput.decision.updatedInput is not an object")
		}
	}
	return nil
}

func dropNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	return raw
}

func isObject(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) > 0 && b[0] == '{'
}
