package authorize

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/settings"
)

// Call is the tool call to decide on.
type Call struct {
	ID, Name string
	Input    json.RawMessage // validated, defaults applied
	ReadOnly bool            // the tool only reads
	// Alone is set when the call is the only tool call of its reply.
	Alone bool
	// AgentID names the subagent that made the call; "" for the main loop.
	AgentID string
	// RequiresUserInteraction marks a tool that needs a person on every
	// call: only CanUseTool can allow it (see policy.go).
	RequiresUserInteraction bool
	// Policy is the tool's per-server permission policy: always_allow,
	// always_ask, always_deny or "" (see policy.go).
	Policy string
}

// Request is what the CanUseTool callback is asked.
type Request struct {
	ToolName, ToolUseID string
	Input               json.RawMessage
	Suggestions         []settings.PermissionUpdate
	BlockedPath         string
	DecisionReason      string
	// ReasonType is the checker's reason type (permission.Reason*).
	ReasonType string
	AgentID    string
}

// Answer is the CanUseTool callback's answer. Behavior is "allow" or
// "deny"; anything else denies the call, saying so.
type Answer struct {
	Behavior           string
	UpdatedInput       json.RawMessage
	UpdatedPermissions []settings.PermissionUpdate
	Message            string
	Interrupt          bool
}

// Checker is the rule and mode step (*permission.Checker).
type Checker interface {
	Decide(ctx context.Context, call permission.Call) permission.Decision
}

// Authorizer runs the authorisation order. Checker is required; every
// other field may be nil: no hooks, no sandbox, nobody to ask (the call is
// denied), no updates applied (an update is then an error), no
// diagnostics. It keeps no state of its own, so one value may serve
// concurrent calls when its collaborators allow it.
type Authorizer struct {
	// PreToolUse runs the PreToolUse hooks for call.
	PreToolUse func(ctx context.Context, call Call) hooks.PreToolUseResult
	Checker    Checker
	// SandboxAllows reports whether the sandbox lets an undecided Bash
	// call run without asking.
	SandboxAllows func(input json.RawMessage, d permission.Decision) bool
	// SandboxEscape reports, for a Bash call the checker allows, why it
	// must be asked all the same because it would leave the sandbox (the
	// model's dangerouslyDisableSandbox), or "" when it need not be.
	SandboxEscape func(input json.RawMessage) string
	// PermissionRequest runs the PermissionRequest hooks for call, with
	// input as the earlier steps left it.
	PermissionRequest func(ctx context.Context, call Call, input json.RawMessage, suggestions []settings.PermissionUpdate) hooks.PermissionRequestResult
	// CanUseTool asks the host.
	CanUseTool func(ctx context.Context, req Request) (Answer, error)
	// Apply applies the permission updates of an allow (in the session,
	// and in settings files for persistent destinations).
	Apply func(ups []settings.PermissionUpdate) error
	// Diag reports something accepted but not honoured.
	Diag func(text string)
	// Blocked returns the decision of the settings that fence the file
	// tools into the working directories ((*permission.Checker).Blocked),
	// or a zero Decision. Decide consults it where the checker is not
	// consulted (a PreToolUse hook's ask) and on the input an approval
	// rewrote, so that no hook or callback lifts such a denial.
	Blocked func(call permission.Call) permission.Decision
	// DenyInsteadOfPrompting denies, with a message saying prompts are
	// off, every call that would be put to CanUseTool; the
	// PermissionRequest hooks are still consulted first
	// (permissions.denyInsteadOfPrompting).
	DenyInsteadOfPrompting bool
}

// Outcome is the decision on a call, with what the session needs to
// remember about it.
type Outcome struct {
	engine.Decision
	// Checked is the checker's decision, when the checker was consulted.
	Checked permission.Decision
	// Decided is the input the rules saw (a PreToolUse hook's
	// updatedInput, or the call's own input).
	Decided json.RawMessage
}

// Decide decides on call. It blocks while hooks or CanUseTool run, and
// returns when they do.
//
// The PreToolUse hooks run before the rest of the decision, in a frame of
// their own: Decide runs on a turn's goroutine under the loop's dispatch,
// and the hooks' stack stacks on whatever frames are below them.
func (a *Authorizer) Decide(ctx context.Context, call *Call) *Outcome {
	var pre *hooks.PreToolUseResult
	if a.PreToolUse != nil {
		pre = a.preToolUse(ctx, call)
	}
	return a.decide(ctx, call, pre)
}

// preToolUse runs the PreToolUse hooks on call.
//
//go:noinline
func (a *Authorizer) preToolUse(ctx context.Context, call *Call) *hooks.PreToolUseResult {
	pre := a.PreToolUse(ctx, *call)
	return &pre
}

// decide is Decide once the PreToolUse hooks gave prep (nil without
// hooks). It is a chain of small steps, each in a function of its own,
// so that the frames under the checker, the sandbox's checks and ask (the
// PermissionRequest hooks and CanUseTool) are small: a decision is made deep
// in a turn's stack, and every byte there adds to the stack each session's
// goroutine grows to. It returns a pointer so that Decide's frame holds no
// Outcome.
//
//go:noinline
func (a *Authorizer) decide(ctx context.Context, call *Call, pre *hooks.PreToolUseResult) *Outcome {
	o, pcall, next := a.beforeChecker(call, pre)
	switch next {
	case stepDone:
		return o
	case stepAsk:
		return a.askFor(ctx, call, o)
	}
	checked := a.check(ctx, pcall)
	if a.afterChecker(call, o, pcall, checked, next == stepHookAllowed) {
		return a.askFor(ctx, call, o)
	}
	return o
}

// check is the checker's decision on pcall, on the heap so that decide's
// frame, under the checker, holds none.
//
//go:noinline
func (a *Authorizer) check(ctx context.Context, pcall *permission.Call) *permission.Decision {
	d := a.Checker.Decide(ctx, *pcall)
	return &d
}

// step is what the part of a decision before the checker leaves to do.
type step int

const (
	stepDone        step = iota // the outcome is decided
	stepAsk                     // the call goes to ask
	stepCheck                   // the checker decides, then afterChecker
	stepHookAllowed             // likewise, a hook having allowed the call
)

// beforeChecker is the part of a decision before the checker: a hook's
// deny, ask, defer or allow, an MCP server's deny policy, the block
// settings on a hook's ask. It returns the outcome so far, the call as the
// checker sees it, and what is left to do.
//
//go:noinline
func (a *Authorizer) beforeChecker(callp *Call, prep *hooks.PreToolUseResult) (*Outcome, *permission.Call, step) {
	call := callp
	var pre hooks.PreToolUseResult
	if prep != nil {
		pre = *prep
	}
	o := &Outcome{Decided: call.Input}
	o.Context = pre.AdditionalContext
	if pre.Halt {
		o.Halt = &engine.Halt{Reason: pre.StopReason}
	}
	if pre.UpdatedInput != nil {
		o.Decided, o.Input = pre.UpdatedInput, pre.UpdatedInput
	}
	pcall := &permission.Call{Tool: call.Name, Input: o.Decided, ReadOnly: call.ReadOnly,
		RequiresUserInteraction: call.needsPerson()}
	switch {
	case pre.Decision == hooks.Deny:
		o.setDeny("hook", "hook", pre.Message, true)
		return o, pcall, stepDone
	case call.Policy == PolicyDeny:
		o.setDeny("config", "rule", fmt.Sprintf("%s is denied by its MCP server's policy (always_deny).", call.Name), false)
		return o, pcall, stepDone
	}
	if a.Blocked != nil && pre.Decision == hooks.Ask {
		// The checker, which applies the block settings itself, is
		// skipped on this path.
		if b := a.Blocked(*pcall); b.Behavior == permission.Deny {
			o.Checked = b
			o.setDeny("config", b.ReasonType, b.Message, false)
			return o, pcall, stepDone
		}
	}
	switch pre.Decision {
	case hooks.Defer:
		*o = a.deferCall(*call, pre, *o)
		return o, pcall, stepDone
	case hooks.Ask:
		o.Checked = permission.Decision{Behavior: permission.Ask, ReasonType: "hook", Reason: pre.Reason,
			Message: fmt.Sprintf("A hook asked for approval of this %s call, and there is no one to ask: %s", call.Name, pre.Reason)}
		return o, pcall, stepAsk
	case hooks.Allow:
		return o, pcall, stepHookAllowed
	}
	return o, pcall, stepCheck
}

// afterChecker is the part of a decision after the checker decided
// checked on pcall: a hook's allow that the checker does not overrule, the
// sandbox's escape check, an MCP server's allow policy, the checker's
// answer, the sandbox's auto-allow. It reports whether the call goes to
// ask; otherwise o is the outcome.
//
//go:noinline
func (a *Authorizer) afterChecker(call *Call, o *Outcome, pcall *permission.Call, checked *permission.Decision, hookAllowed bool) bool {
	o.Checked = call.explain(*checked)
	if hookAllowed {
		// A hook's approval skips the mode and allow rules, never the deny
		// and ask rules.
		if o.Checked.Behavior == permission.Allow || (o.Checked.ReasonType != permission.ReasonRule && !pcall.RequiresUserInteraction && !o.Checked.Blocked) {
			o.setAllow("hook", "hook")
			return false
		}
	}
	if call.Name == "Bash" && a.SandboxEscape != nil && o.Checked.Behavior == permission.Allow {
		if why := a.SandboxEscape(o.Decided); why != "" {
			d := o.Checked
			d.Behavior, d.ReasonType, d.Reason, d.Rule, d.RuleSource = permission.Ask, permission.ReasonSafetyCheck, why, "", ""
			d.Message = "Bash asked to run this command outside the sandbox, which needs approval, and there is no one to ask: " + why
			o.Checked = d
			return true
		}
	}
	if !o.Checked.Blocked && call.policyAllows(o.Checked) {
		o.setAllow("config", permission.ReasonRule)
		return false
	}
	switch o.Checked.Behavior {
	case permission.Allow:
		o.setAllow("config", o.Checked.ReasonType)
		return false
	case permission.Deny:
		o.setDeny("config", o.Checked.ReasonType, o.Checked.Message, false)
		return false
	}
	if call.Name == "Bash" && !o.Checked.Blocked && a.SandboxAllows != nil && a.SandboxAllows(o.Decided, o.Checked) {
		o.setAllow("config", "sandbox")
		return false
	}
	return true
}

// askFor is ask for call with the outcome so far o.
//
//go:noinline
func (a *Authorizer) askFor(ctx context.Context, call *Call, o *Outcome) *Outcome {
	r := a.ask(ctx, *call, *o)
	return &r
}

// reblock denies an approved call whose input an answer rewrote when the
// block settings refuse the new input.
func (a *Authorizer) reblock(call Call, o Outcome) Outcome {
	if a.Blocked == nil || o.Input == nil || !o.Allow {
		return o
	}
	b := a.Blocked(permission.Call{Tool: call.Name, Input: o.Input, ReadOnly: call.ReadOnly,
		RequiresUserInteraction: call.needsPerson()})
	if b.Behavior == permission.Deny {
		o.Checked = b
		return o.deny(o.Source, b.ReasonType, b.Message, false)
	}
	return o
}

// msgNoPrompt is the denial of a call that would have been put to a
// person while permissions.denyInsteadOfPrompting is on.
func msgNoPrompt(tool, why string) string {
	msg := "This " + tool + " call needs approval, but permission prompts are turned off " +
		"(permissions.denyInsteadOfPrompting), so it is denied."
	if why != "" {
		msg += " It needed approval because: " + why
	}
	return msg
}

// deferCall honours a PreToolUse defer on the only call of a main-loop
// reply; anywhere else the defer is a denial, and a diagnostic says why.
func (a *Authorizer) deferCall(call Call, pre hooks.PreToolUseResult, o Outcome) Outcome {
	o.Input = nil // updatedInput is ignored with defer
	if call.Alone && call.AgentID == "" {
		o.Defer, o.Source, o.ReasonType = true, "hook", "hook"
		return o
	}
	where := "its reply has more than one tool call"
	if call.AgentID != "" {
		where = "it was made by subagent " + call.AgentID
	}
	reason := pre.Reason
	if reason == "" {
		reason = "Deferred by hook"
	}
	a.diag(fmt.Sprintf("a PreToolUse hook deferred the %s call %s, but %s: defer needs the only tool call of a main-loop reply, so the call is denied", call.Name, call.ID, where))
	return o.deny("hook", "hook", fmt.Sprintf("PreToolUse:%s hook error: %s", call.Name, reason), true)
}

// ask puts an undecided call to the PermissionRequest hooks and then to
// CanUseTool.
func (a *Authorizer) ask(ctx context.Context, call Call, o Outcome) Outcome {
	d := o.Checked
	suggestions := toSettingsUpdates(d.Suggestions)
	var pr hooks.PermissionRequestResult
	if a.PermissionRequest != nil {
		pr = a.PermissionRequest(ctx, call, o.Decided, suggestions)
	}
	if pr.Decision == hooks.Allow && call.RequiresUserInteraction {
		a.diag(fmt.Sprintf("a PermissionRequest hook allowed the %s call %s, but the tool requires user interaction: the hook's allow is not honoured and the call goes to the permission callback", call.Name, call.ID))
		pr = hooks.PermissionRequestResult{}
	}
	switch pr.Decision {
	case hooks.Allow:
		if err := a.apply(pr.UpdatedPermissions); err != nil {
			return o.deny("hook", "hook", err.Error(), false)
		}
		if pr.UpdatedInput != nil {
			o.Input = pr.UpdatedInput
		}
		return a.reblock(call, o.allow("hook", "hook"))
	case hooks.Deny:
		o = o.deny("hook", "hook", pr.Message, false)
		o.Interrupt = pr.Interrupt
		return o
	}
	if a.DenyInsteadOfPrompting {
		why := d.Reason
		if why == "" {
			why = d.Message
		}
		return o.deny("config", d.ReasonType, msgNoPrompt(call.Name, why), false)
	}
	if a.CanUseTool == nil {
		return o.deny("config", d.ReasonType, d.Message, false)
	}
	res, err := a.CanUseTool(ctx, Request{ToolName: call.Name, Input: o.Decided, ToolUseID: call.ID,
		Suggestions: suggestions, BlockedPath: d.BlockedPath, DecisionReason: d.Reason, ReasonType: d.ReasonType, AgentID: call.AgentID})
	switch {
	case err != nil:
		return o.deny("user", "user", fmt.Sprintf("The permission check for %s failed: %v", call.Name, err), false)
	case res.Behavior == string(vocab.Allow):
		if err := a.apply(res.UpdatedPermissions); err != nil {
			return o.deny("user", "user", err.Error(), false)
		}
		if res.UpdatedInput != nil {
			o.Input = res.UpdatedInput
		}
		return a.reblock(call, o.allow("user", "user"))
	case res.Behavior == "deny":
		msg := res.Message
		if msg == "" {
			msg = "The user denied this " + call.Name + " call."
		}
		o = o.deny("user", "user", msg, false)
		o.Interrupt = res.Interrupt
		return o
	}
	return o.deny("user", "user", fmt.Sprintf("The permission check for %s answered %q; want allow or deny.", call.Name, res.Behavior), false)
}

func (a *Authorizer) apply(ups []settings.PermissionUpdate) error {
	if len(ups) == 0 {
		return nil
	}
	if a.Apply == nil {
		return fmt.Errorf("permission update: %d updates given, but this session cannot apply them", len(ups))
	}
	return a.Apply(ups)
}

func (a *Authorizer) diag(text string) {
	if a.Diag != nil {
		a.Diag(text)
	}
}

// setAllow and setDeny are allow and deny in place, for the steps of a
// decision whose frames must stay small (see decide): a copy of an Outcome
// takes hundreds of bytes there.
func (o *Outcome) setAllow(source, reason string) {
	o.Allow, o.Source, o.ReasonType = true, source, reason
}

func (o *Outcome) setDeny(source, reason, msg string, quiet bool) {
	o.Allow, o.Source, o.ReasonType, o.Message, o.Quiet = false, source, reason, msg, quiet
}

func (o Outcome) allow(source, reason string) Outcome {
	o.Allow, o.Source, o.ReasonType = true, source, reason
	return o
}

func (o Outcome) deny(source, reason, msg string, quiet bool) Outcome {
	o.Allow, o.Source, o.ReasonType, o.Message, o.Quiet = false, source, reason, msg, quiet
	return o
}

// toSettingsUpdates converts the checker's suggestions to the public wire
// form (the two types share it).
func toSettingsUpdates(in []permission.Update) []settings.PermissionUpdate {
	if len(in) == 0 {
		return nil
	}
	var out []settings.PermissionUpdate
	b, err := json.Marshal(in)
	if err != nil || json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}
