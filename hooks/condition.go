package hooks

import (
	"encoding/json"
	"fmt"

	"github.com/agentloop/agentloop/internal/permission"
)

// A settings hook's "if" field is a permission rule, Tool or
// Tool(content), that a tool call must match for the hook to run
// (internal/permission.Condition does the matching, with the checker's
// own matchers). It is only evaluated for tool events; see toolEvent.
//
// A guard hook must not be dodged, so the condition is read the way a
// deny rule is: a compound command matches when any part does, and a
// call the checker cannot judge (a command it cannot parse, text run as
// code, a word it cannot know, content it has no matcher for) still runs
// the hook, but only to deny or block: an allow or approve from that run,
// and any updatedInput, are dropped (Config.Debug is told). A condition
// that cannot be tested at all (a relative file path with no working
// directory) runs the hook as if it matched.

// condition is a hook's parsed "if".
type condition struct {
	text string
	cond permission.Condition
	bad  bool // did not parse: every call of a tool event is unknown
}

// toolEvent reports whether "if" conditions are evaluated for ev: the
// events that concern one tool call.
func toolEvent(ev Event) bool {
	switch ev {
	case PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest:
		return true
	}
	return false
}

// newCondition parses a hook's "if"; the warnings say what will not be
// evaluated.
func newCondition(text string) (*condition, []string) {
	c, err := permission.ParseCondition(text)
	if err != nil {
		return &condition{text: text, bad: true}, []string{fmt.Sprintf(
			"if condition %q cannot be parsed (%v); the hook runs for every call, and only a deny or block from it counts", text, err)}
	}
	var warns []string
	if n := c.Note(); n != "" {
		warns = append(warns, fmt.Sprintf(
			"if condition %q cannot be evaluated (%s); the hook runs for every %s call, and only a deny or block from it counts", text, n, c.Value.ToolName))
	}
	return &condition{text: text, cond: c}, warns
}

// toolCallOf is the tool call of a tool event's input.
func toolCallOf(in Input) (permission.ConditionCall, bool) {
	var name, cwd string
	var input json.RawMessage
	switch v := in.(type) {
	case PreToolUseInput:
		name, input, cwd = v.ToolName, v.ToolInput, v.Cwd
	case PostToolUseInput:
		name, input, cwd = v.ToolName, v.ToolInput, v.Cwd
	case PostToolUseFailureInput:
		name, input, cwd = v.ToolName, v.ToolInput, v.Cwd
	case PermissionRequestInput:
		name, input, cwd = v.ToolName, v.ToolInput, v.Cwd
	default:
		return permission.ConditionCall{}, false
	}
	return permission.ConditionCall{Tool: name, Input: input, Cwd: cwd}, true
}

// gate decides whether a hook with a condition runs for in: run is false
// when the call does not match; denyOnly is set when the call could not
// be judged and the hook may only deny or block.
func (d *Dispatcher) gate(h *hook, in Input) (run, denyOnly bool) {
	if h.cond == nil {
		return true, false
	}
	call, ok := toolCallOf(in)
	if !ok {
		return false, false // New leaves such hooks out; kept for safety
	}
	if h.cond.bad {
		return true, true
	}
	res, why := h.cond.cond.Match(call)
	switch res {
	case permission.ConditionMatch:
		return true, false
	case permission.ConditionUnknown:
		return true, true
	case permission.ConditionUntested:
		d.debug(fmt.Sprintf("%s:%s hook %s: if condition %q not tested (%s); the hook runs",
			in.EventName(), call.Tool, h.label(), h.cond.text, why))
		return true, false
	}
	return false, false
}

// dropAllow removes from the output of a deny-only run whatever would
// allow the call or change its input: a PreToolUse allow (and the
// legacy approve), a PermissionRequest allow, an updatedInput.
func (d *Dispatcher) dropAllow(r *run) {
	if !r.hasOut {
		return
	}
	var dropped []string
	if r.out.Decision == "approve" {
		r.out.Decision, r.out.Reason = "", ""
		dropped = append(dropped, `decision "approve"`)
	}
	if h := r.out.HookSpecificOutput; h != nil {
		c := *h // the output may be shared; change a copy
		if c.PermissionDecision == Allow {
			c.PermissionDecision, c.PermissionDecisionReason = None, ""
			dropped = append(dropped, `permissionDecision "allow"`)
		}
		if c.UpdatedInput != nil {
			c.UpdatedInput = nil
			dropped = append(dropped, "updatedInput")
		}
		if c.Decision != nil && c.Decision.Behavior != "deny" {
			c.Decision = nil
			dropped = append(dropped, "a permission decision that is not deny")
		}
		r.out.HookSpecificOutput = &c
	}
	if len(dropped) > 0 {
		d.debug(fmt.Sprintf("%s hook %s: the call could not be judged against if condition %q, so only a deny or block counts; dropped %v",
			r.name, r.label(), r.h.cond.text, dropped))
	}
}

// debug passes a note to Config.Debug.
func (d *Dispatcher) debug(text string) {
	if d.cfg.Debug != nil {
		d.cfg.Debug(text)
	}
}
