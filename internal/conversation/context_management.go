package conversation

import (
	"fmt"

	"github.com/agentloop/agentloop/model"
)

// ContextManagement asks the Messages API to edit the context on its side
// (its context_management field, sent with the context-management beta):
// old tool results or old thinking are cleared before the model reads the
// request, while the session's history and transcript stay whole. It is
// off unless Options.ContextManagement is set; the client-side handling of
// a full context stays the default and the fallback. Example, clearing all
// but the last three tool results once the input passes 100,000 tokens:
//
//	&agentloop.ContextManagement{Edits: []agentloop.ContextEdit{{
//		Type:    agentloop.EditClearToolUses,
//		Trigger: &agentloop.ContextAmount{Type: "input_tokens", Value: 100_000},
//		Keep:    &agentloop.ContextAmount{Type: "tool_uses", Value: 3},
//	}}}
type ContextManagement = model.ContextManagement

// ContextEdit is one edit of a [ContextManagement].
type ContextEdit = model.ContextEdit

// ContextAmount is a typed amount in a [ContextEdit].
type ContextAmount = model.ContextAmount

// The edit types.
const (
	EditClearToolUses = model.EditClearToolUses
	EditClearThinking = model.EditClearThinking
)

// checkContextManagement reports what is wrong with cm, naming the edit.
func checkContextManagement(cm *ContextManagement) error {
	if cm == nil {
		return nil
	}
	if len(cm.Edits) == 0 {
		return fmt.Errorf("%w: ContextManagement has no edits", ErrInvalidOption)
	}
	for i, e := range cm.Edits {
		bad := func(what string) error {
			return fmt.Errorf("%w: ContextManagement.Edits[%d] (%s): %s", ErrInvalidOption, i, e.Type, what)
		}
		amount := func(name string, a *ContextAmount, types ...string) error {
			if a == nil {
				return nil
			}
			for _, t := range types {
				if a.Type == t && (t == "all" || a.Value > 0) {
					return nil
				}
			}
			return bad(fmt.Sprintf("%s must be one of %v with a positive value (all has none), not %+v", name, types, *a))
		}
		switch e.Type {
		case EditClearToolUses:
			if err := amount("Trigger", e.Trigger, "input_tokens", "tool_uses"); err != nil {
				return err
			}
			if err := amount("Keep", e.Keep, "tool_uses"); err != nil {
				return err
			}
			if err := amount("ClearAtLeast", e.ClearAtLeast, "input_tokens"); err != nil {
				return err
			}
			if e.ClearAllToolInputs && len(e.ClearToolInputs) > 0 {
				return bad("set ClearAllToolInputs or ClearToolInputs, not both")
			}
		case EditClearThinking:
			if e.Trigger != nil || e.ClearAtLeast != nil || len(e.ExcludeTools) > 0 ||
				e.ClearAllToolInputs || len(e.ClearToolInputs) > 0 {
				return bad("only Keep applies to this edit")
			}
			if err := amount("Keep", e.Keep, "thinking_turns", "all"); err != nil {
				return err
			}
		default:
			return bad(fmt.Sprintf("unknown edit type; want %s or %s", EditClearToolUses, EditClearThinking))
		}
	}
	return nil
}
