package authorize

import (
	"fmt"

	"github.com/agentloop/agentloop/internal/permission"
)

// Two properties of an MCP tool change the order (Call.RequiresUserInteraction
// and Call.Policy):
//
//   - A tool that requires user interaction is asked like a tool an ask
//     rule names, and more: neither a PreToolUse hook's allow, nor an
//     allow rule, the mode (bypassPermissions included) or a
//     PermissionRequest hook's allow approves it; only CanUseTool can. In
//     dontAsk mode, and with no callback, it is denied.
//   - Policy always_deny denies every call, after a PreToolUse hook's deny
//     and before anything that could allow it. always_ask works as an ask
//     rule: deny rules still win, everything else goes to the
//     PermissionRequest hooks and CanUseTool (denied in dontAsk).
//     always_allow works as an allow rule: it approves what the mode
//     would ask (or, in dontAsk, deny) and what the auto-mode classifier
//     decided, never what a deny or ask rule, or the need for a person,
//     decided.

// The per-tool policies (Call.Policy; the values of
// tool.MCPToolPolicy.PermissionPolicy).
const (
	PolicyAllow = "always_allow"
	PolicyAsk   = "always_ask"
	PolicyDeny  = "always_deny"
)

// needsPerson reports whether the call must be asked whatever allows it:
// the checker treats such a call as one that needs a person.
func (c Call) needsPerson() bool {
	return c.RequiresUserInteraction || c.Policy == PolicyAsk
}

// policyAllows reports whether always_allow approves a call the checker
// did not allow: one that only the mode or the classifier held back.
func (c Call) policyAllows(d permission.Decision) bool {
	if c.Policy != PolicyAllow || c.needsPerson() || d.Behavior == permission.Allow {
		return false
	}
	return d.ReasonType == permission.ReasonMode || d.ReasonType == permission.ReasonClassifier
}

// explain rewrites the checker's message when always_ask, not the tool,
// is why the call needs a person: the model and the callback are told of
// the server's policy.
func (c Call) explain(d permission.Decision) permission.Decision {
	if c.Policy != PolicyAsk || c.RequiresUserInteraction || d.Behavior == permission.Allow || d.ReasonType != permission.ReasonOther {
		return d
	}
	d.Message = fmt.Sprintf("%s needs approval on every call (its MCP server's policy is always_ask), and was not approved.", c.Name)
	return d
}
