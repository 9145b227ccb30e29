package hooks

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentloop/agentloop/settings"
)

// Common are the result fields every event has.
type Common struct {
	// Halt is set when a hook returned continue:false. The engine must
	// end the run after this hook point, whatever the other fields say,
	// and show StopReason to the user (never to the model). Never set for
	// Notification, PreCompact and SessionEnd, which ignore it.
	Halt       bool
	StopReason string
	// SystemMessages are warnings for the user, in registration order
	// (the engine may print them, e.g. as system/informational lines).
	SystemMessages []string
	// Errors describe hooks that failed without blocking (exit codes
	// other than 0 and 2, invalid output, callback errors and panics,
	// timeouts) and, for events that cannot block, hooks that exited 2.
	// Each reads "<hook name> hook error: <hook>: <what>". The engine may
	// log them or show them to the user; they never stop anything.
	Errors []string
	// Ran counts the hooks that ran.
	Ran int
}

// haltable events honour continue:false.
func haltable(ev Event) bool {
	return ev != Notification && ev != PreCompact && ev != PostCompact && ev != SessionEnd
}

// common merges the fields every event has.
func (d *Dispatcher) common(ev Event, runs []*run) Common {
	c := Common{Ran: len(runs)}
	for _, r := range runs {
		if r.failure != "" {
			c.Errors = append(c.Errors, d.reportCause(r.name+" hook error: "+r.failure, r.cause))
		}
		if r.timedOut || r.canceled {
			c.Errors = append(c.Errors, d.report(r.name+" hook error: "+r.lateText()))
		}
		if !r.hasOut {
			continue
		}
		if r.out.Halt && haltable(ev) {
			if c.StopReason == "" {
				c.StopReason = d.capText(r.out.StopReason)
			}
			c.Halt = true
		}
		if r.out.SystemMessage != "" {
			msg := d.capText(r.out.SystemMessage)
			c.SystemMessages = append(c.SystemMessages, msg)
			if d.cfg.SystemMessage != nil {
				d.cfg.SystemMessage(msg)
			}
		}
	}
	return c
}

// contexts collects additionalContext in registration order, and with
// plain the stdout of hooks that exited 0 without JSON.
func (d *Dispatcher) contexts(runs []*run, plain bool) []string {
	var out []string
	for _, r := range runs {
		switch {
		case r.hasOut && r.out.HookSpecificOutput != nil && r.out.HookSpecificOutput.AdditionalContext != "":
			out = append(out, d.capText(r.out.HookSpecificOutput.AdditionalContext))
		case plain && strings.TrimSpace(r.plain) != "":
			out = append(out, d.capText(strings.TrimRight(r.plain, "\n")))
		}
	}
	return out
}

// blocks merges the blocking outcomes of events with a top-level
// decision:"block": exit 2 (stderr) and decision "block" (reason), in
// registration order, one per line.
func (d *Dispatcher) blocks(runs []*run) (bool, string) {
	var reasons []string
	for _, r := range runs {
		switch {
		case r.blocked:
			reasons = append(reasons, r.blockText())
		case r.hasOut && r.out.Decision == "block":
			reason := r.out.Reason
			if reason == "" {
				reason = "Blocked by hook"
			}
			reasons = append(reasons, reason)
		}
	}
	if reasons == nil {
		return false, ""
	}
	return true, d.capText(strings.Join(reasons, "\n"))
}

// exit2ToUser reports exit-2 hooks of events that cannot block.
func (d *Dispatcher) exit2ToUser(c *Common, runs []*run) {
	for _, r := range runs {
		if r.blocked {
			c.Errors = append(c.Errors, d.report(r.name+" hook error: "+r.blockText()))
		}
	}
}

// report passes a hook error to Config.Report (or ReportError) and
// returns it.
func (d *Dispatcher) report(text string) string {
	return d.reportCause(text, nil)
}

// reportCause is report for a failure whose cause is known: the error a
// Go callback returned.
func (d *Dispatcher) reportCause(text string, cause error) string {
	switch {
	case d.cfg.ReportError != nil:
		d.cfg.ReportError(text, cause)
	case d.cfg.Report != nil:
		d.cfg.Report(text)
	}
	return text
}

func specific(r *run) *HookSpecificOutput {
	if !r.hasOut || r.out.HookSpecificOutput == nil {
		return nil
	}
	return r.out.HookSpecificOutput
}

// PreToolUseResult is the merged outcome of the PreToolUse hooks of one
// tool call.
type PreToolUseResult struct {
	Common
	// Decision is the strongest decision of the hooks: Deny > Defer >
	// Ask > Allow > None. A hook that exits 2 or returns decision:"block"
	// denies; one that returns decision:"approve" allows; one that times
	// out or is cancelled denies too (its tool is not run), though an
	// explicit deny's reason is preferred. Errors do not decide.
	//
	// The engine must:
	//   - Deny: not run the tool; give the model an is_error tool_result
	//     with Message, record a permission denial with source "hook" and
	//     reason_type "hook" (system/permission_denied, the result's
	//     permission_denials, tool_result_meta non_execution_kind
	//     "permission-rule").
	//   - Defer: not run the tool; if it is the only tool call of the
	//     reply, end the run with stop_reason "tool_deferred" and
	//     deferred_tool_use {id, name, input}; otherwise treat it as Deny.
	//   - Ask: skip the rules and mode and go to the permission prompt
	//     (canUseTool / PermissionRequest; denied when nobody can be
	//     asked), showing Reason.
	//   - Allow: skip the mode and allow-rule steps, but still apply deny
	//     and ask rules (a hook cannot override them).
	//   - None: authorise as usual.
	Decision Decision
	// Reason is the winning hook's reason as it gave it (for a command
	// that exited 2: "[<command>]: <stderr>").
	Reason string
	// Message is, for Deny, the tool_result text:
	// "PreToolUse:<tool> hook error: <Reason>".
	Message string
	// UpdatedInput, when not nil, replaces the whole tool input before
	// the rest of authorisation and the call (the engine re-validates
	// it). It is the updatedInput of the last hook, in registration
	// order, that gave one and whose own decision is the winning one or
	// none; nil when the decision is Deny or Defer.
	UpdatedInput json.RawMessage
	// AdditionalContext is for the model, each in a system reminder next
	// to the tool's result, in registration order.
	AdditionalContext []string
}

// PreToolUse runs the PreToolUse hooks for a tool call. It blocks until
// they finish; cancelling ctx cancels them (the result then denies, and
// the engine must not run the tool).
func (d *Dispatcher) PreToolUse(ctx context.Context, in PreToolUseInput) PreToolUseResult {
	d.fill(&in.Base, PreToolUse)
	runs := d.dispatch(ctx, in)
	res := PreToolUseResult{Common: d.common(PreToolUse, runs), AdditionalContext: d.contexts(runs, false)}
	best := 0
	decisions := make([]Decision, len(runs))
	for i, r := range runs {
		var dec Decision
		var reason string
		rank := 0
		switch {
		case r.blocked:
			dec, reason = Deny, r.blockText()
		case r.timedOut || r.canceled:
			dec, reason, rank = Deny, r.lateText(), 4
		case r.hasOut:
			if h := specific(r); h != nil && h.PermissionDecision != None {
				dec, reason = h.PermissionDecision, h.PermissionDecisionReason
			} else if r.out.Decision == "block" {
				dec, reason = Deny, r.out.Reason
			} else if r.out.Decision == "approve" {
				dec, reason = Allow, r.out.Reason
			}
		}
		if rank == 0 {
			rank = dec.rank()
		}
		decisions[i] = dec
		if rank > best {
			best, res.Decision, res.Reason = rank, dec, reason
		}
	}
	if res.Decision == Deny {
		if res.Reason == "" {
			res.Reason = "Blocked by hook"
		}
		res.Reason = d.capText(res.Reason)
		res.Message = runs[0].name + " hook error: " + res.Reason
	}
	if res.Decision != Deny && res.Decision != Defer {
		for i, r := range runs {
			if h := specific(r); h != nil && h.UpdatedInput != nil &&
				(decisions[i] == res.Decision || decisions[i] == None) {
				res.UpdatedInput = h.UpdatedInput
			}
		}
	}
	return res
}

// PostToolUseResult is the merged outcome of the PostToolUse hooks of one
// successful tool call.
type PostToolUseResult struct {
	Common
	// Blocked is set when a hook exited 2 or returned decision:"block".
	// The tool has run and its result stands: the engine adds Reason
	// (one line per blocking hook; "[<command>]: <stderr>" for exit 2) to
	// what the model sees after the tool result, e.g. as
	// "PostToolUse:<tool> hook error: <Reason>".
	Blocked bool
	Reason  string
	// UpdatedToolOutput, when not nil, replaces the tool's output (the
	// tool_use_result and the tool_result content the model sees). It is
	// the last one given, in registration order.
	UpdatedToolOutput json.RawMessage
	// AdditionalContext is for the model, next to the tool result.
	AdditionalContext []string
}

// PostToolUse runs the PostToolUse hooks after a tool call succeeded.
// Hooks that time out are reported in Errors; the tool result is kept.
func (d *Dispatcher) PostToolUse(ctx context.Context, in PostToolUseInput) PostToolUseResult {
	d.fill(&in.Base, PostToolUse)
	runs := d.dispatch(ctx, in)
	res := PostToolUseResult{Common: d.common(PostToolUse, runs), AdditionalContext: d.contexts(runs, false)}
	res.Blocked, res.Reason = d.blocks(runs)
	for _, r := range runs {
		if h := specific(r); h != nil {
			if h.UpdatedToolOutput != nil {
				res.UpdatedToolOutput = h.UpdatedToolOutput
			} else if h.UpdatedMCPToolOutput != nil {
				res.UpdatedToolOutput = h.UpdatedMCPToolOutput
			}
		}
	}
	return res
}

// PostToolUseFailureResult is the merged outcome of the
// PostToolUseFailure hooks of one failed tool call.
type PostToolUseFailureResult struct {
	Common
	// Blocked and Reason are as for PostToolUse: feedback for the model
	// after the (error) tool result; the result stands.
	Blocked bool
	Reason  string
	// AdditionalContext is for the model, next to the tool result.
	AdditionalContext []string
}

// PostToolUseFailure runs the PostToolUseFailure hooks after a tool call
// failed.
func (d *Dispatcher) PostToolUseFailure(ctx context.Context, in PostToolUseFailureInput) PostToolUseFailureResult {
	d.fill(&in.Base, PostToolUseFailure)
	runs := d.dispatch(ctx, in)
	res := PostToolUseFailureResult{Common: d.common(PostToolUseFailure, runs), AdditionalContext: d.contexts(runs, false)}
	res.Blocked, res.Reason = d.blocks(runs)
	return res
}

// UserPromptSubmitResult is the merged outcome of the UserPromptSubmit
// hooks of one prompt.
type UserPromptSubmitResult struct {
	Common
	// Blocked is set when a hook exited 2, returned decision:"block",
	// timed out or was cancelled. The engine must drop the prompt (not
	// send it, not keep it in the conversation) and show Reason to the
	// user, not the model.
	Blocked bool
	Reason  string
	// AdditionalContext is for the model, next to the prompt: the hooks'
	// additionalContext and the plain (non-JSON) stdout of hooks that
	// exited 0, in registration order.
	AdditionalContext []string
	// SessionTitle, if set, names the session (the last one given).
	SessionTitle string
	// SuppressOriginalPrompt asks that the prompt not be displayed.
	SuppressOriginalPrompt bool
}

// UserPromptSubmit runs the UserPromptSubmit hooks before a prompt is
// sent. Matchers do not apply: every hook of the event runs.
func (d *Dispatcher) UserPromptSubmit(ctx context.Context, in UserPromptSubmitInput) UserPromptSubmitResult {
	d.fill(&in.Base, UserPromptSubmit)
	runs := d.dispatch(ctx, in)
	res := UserPromptSubmitResult{Common: d.common(UserPromptSubmit, runs), AdditionalContext: d.contexts(runs, true)}
	res.Blocked, res.Reason = d.promptBlocks(runs)
	for _, r := range runs {
		if h := specific(r); h != nil {
			if h.SessionTitle != "" {
				res.SessionTitle = h.SessionTitle
			}
			res.SuppressOriginalPrompt = res.SuppressOriginalPrompt || h.SuppressOriginalPrompt
		}
	}
	return res
}

// promptBlocks merges the blocks of the hooks that run before a prompt is
// sent (UserPromptSubmit, UserPromptExpansion): a hook that blocked, and
// one that timed out or was cancelled, since a prompt is not sent on a
// hook's silence; each adds a line to the reason.
func (d *Dispatcher) promptBlocks(runs []*run) (bool, string) {
	blocked, reason := d.blocks(runs)
	var late []string
	for _, r := range runs {
		if r.timedOut || r.canceled {
			late = append(late, r.lateText())
		}
	}
	if late == nil {
		return blocked, reason
	}
	if reason != "" {
		late = append([]string{reason}, late...)
	}
	return true, strings.Join(late, "\n")
}

// StopResult is the merged outcome of the Stop hooks (and of SubagentStop
// hooks, for a subagent).
type StopResult struct {
	Common
	// Blocked is set when a hook exited 2 or returned decision:"block":
	// the agent must not stop. The engine gives the model Reason (one
	// line per blocking hook) as a new user turn and calls it again, with
	// stop_hook_active true in the next Stop input. It should stop
	// honouring blocks after MaxStopContinuations in a row. Halt
	// overrides Blocked. A hook that times out does not block; it is
	// reported in Errors and the agent stops.
	Blocked bool
	Reason  string
	// AdditionalContext, when not empty, also keeps the agent going: the
	// engine adds it for the model (system reminders) and continues the
	// turn, without an error.
	AdditionalContext []string
}

// MaxStopContinuations is how many turns in a row Stop (or SubagentStop)
// hooks may keep an agent from stopping.
const MaxStopContinuations = 8

// Stop runs the Stop hooks when the main agent is about to end its turn.
// Matchers do not apply: every hook of the event runs.
func (d *Dispatcher) Stop(ctx context.Context, in StopInput) StopResult {
	d.fill(&in.Base, Stop)
	return d.stop(ctx, Stop, in)
}

// SubagentStop runs the SubagentStop hooks when a subagent is about to
// finish; matchers match the agent type. The result means for the
// subagent what StopResult means for the main agent.
func (d *Dispatcher) SubagentStop(ctx context.Context, in SubagentStopInput) StopResult {
	d.fill(&in.Base, SubagentStop)
	return d.stop(ctx, SubagentStop, in)
}

func (d *Dispatcher) stop(ctx context.Context, ev Event, in Input) StopResult {
	runs := d.dispatch(ctx, in)
	res := StopResult{Common: d.common(ev, runs), AdditionalContext: d.contexts(runs, false)}
	res.Blocked, res.Reason = d.blocks(runs)
	return res
}

// ContextResult is the outcome of events whose hooks can only add
// context: SubagentStart and Notification.
type ContextResult struct {
	Common
	// AdditionalContext is for the model: at the start of the subagent's
	// conversation (SubagentStart), or next to the next turn
	// (Notification). Hooks that exit 2 cannot block these events; their
	// stderr is reported in Errors, for the user.
	AdditionalContext []string
}

// SubagentStart runs the SubagentStart hooks when a subagent starts;
// matchers match the agent type.
func (d *Dispatcher) SubagentStart(ctx context.Context, in SubagentStartInput) ContextResult {
	d.fill(&in.Base, SubagentStart)
	runs := d.dispatch(ctx, in)
	res := ContextResult{Common: d.common(SubagentStart, runs), AdditionalContext: d.contexts(runs, false)}
	d.exit2ToUser(&res.Common, runs)
	return res
}

// Notification runs the Notification hooks; matchers match the
// notification type. continue:false is ignored.
func (d *Dispatcher) Notification(ctx context.Context, in NotificationInput) ContextResult {
	d.fill(&in.Base, Notification)
	runs := d.dispatch(ctx, in)
	res := ContextResult{Common: d.common(Notification, runs), AdditionalContext: d.contexts(runs, false)}
	d.exit2ToUser(&res.Common, runs)
	return res
}

// PreCompactResult is the merged outcome of the PreCompact hooks.
type PreCompactResult struct {
	Common
	// Blocked is set when a hook exited 2 or returned decision:"block":
	// the engine must not compact. An automatic compaction is skipped; a
	// compaction needed to recover from a context-length error fails with
	// that error. Reason is shown to the user.
	Blocked bool
	Reason  string
}

// PreCompact runs the PreCompact hooks before compaction; matchers match
// the trigger (manual, auto). continue:false is ignored.
func (d *Dispatcher) PreCompact(ctx context.Context, in PreCompactInput) PreCompactResult {
	d.fill(&in.Base, PreCompact)
	runs := d.dispatch(ctx, in)
	res := PreCompactResult{Common: d.common(PreCompact, runs)}
	res.Blocked, res.Reason = d.blocks(runs)
	return res
}

// PostCompact runs the PostCompact hooks after a compaction; matchers
// match the trigger. Their output has no effect beyond what every event
// reports (Errors, SystemMessages); continue:false is ignored.
func (d *Dispatcher) PostCompact(ctx context.Context, in PostCompactInput) Common {
	d.fill(&in.Base, PostCompact)
	runs := d.dispatch(ctx, in)
	return d.common(PostCompact, runs)
}

// SessionStartResult is the merged outcome of the SessionStart hooks.
type SessionStartResult struct {
	Common
	// AdditionalContext is for the model at the start of the
	// conversation: the hooks' additionalContext and the plain (non-JSON)
	// stdout of hooks that exited 0, in registration order.
	AdditionalContext []string
	// InitialUserMessage, if set, is a first prompt for the session (the
	// last one given).
	InitialUserMessage string
	// SessionTitle, if set, names the session (the last one given).
	SessionTitle string
}

// SessionStart runs the SessionStart hooks; matchers match the source
// (startup, resume, clear, compact, fork). Hooks that exit 2 cannot block
// it; their stderr is reported in Errors.
func (d *Dispatcher) SessionStart(ctx context.Context, in SessionStartInput) SessionStartResult {
	d.fill(&in.Base, SessionStart)
	runs := d.dispatch(ctx, in)
	res := SessionStartResult{Common: d.common(SessionStart, runs), AdditionalContext: d.contexts(runs, true)}
	d.exit2ToUser(&res.Common, runs)
	for _, r := range runs {
		if h := specific(r); h != nil {
			if h.InitialUserMessage != "" {
				res.InitialUserMessage = h.InitialUserMessage
			}
			if h.SessionTitle != "" {
				res.SessionTitle = h.SessionTitle
			}
		}
	}
	return res
}

// SessionEnd runs the SessionEnd hooks as the session ends; matchers
// match the reason. All of them together get at most SessionEndBudget;
// the result only reports (Errors, SystemMessages).
func (d *Dispatcher) SessionEnd(ctx context.Context, in SessionEndInput) Common {
	d.fill(&in.Base, SessionEnd)
	runs := d.dispatch(ctx, in)
	c := d.common(SessionEnd, runs)
	d.exit2ToUser(&c, runs)
	return c
}

// PermissionRequestResult is the merged outcome of the PermissionRequest
// hooks of one permission prompt.
type PermissionRequestResult struct {
	Common
	// Decision is Allow, Deny or None; Deny wins over Allow. A hook that
	// exits 2 denies with its stderr as Message. With None (no hook
	// answered, or they failed) the engine asks as it would have.
	//   - Allow: the engine approves the call without asking, with
	//     UpdatedInput if not nil (re-checked against deny and ask rules
	//     and re-validated), and applies UpdatedPermissions (rule changes,
	//     persisted with settings.Apply for file destinations).
	//   - Deny: the engine refuses the call, telling the model Message,
	//     and with Interrupt also ends the turn.
	Decision           Decision
	UpdatedInput       json.RawMessage
	UpdatedPermissions []settings.PermissionUpdate
	Message            string
	Interrupt          bool
}

// PermissionRequest runs the PermissionRequest hooks when a permission
// prompt is about to be shown; matchers match the tool name.
func (d *Dispatcher) PermissionRequest(ctx context.Context, in PermissionRequestInput) PermissionRequestResult {
	d.fill(&in.Base, PermissionRequest)
	runs := d.dispatch(ctx, in)
	res := PermissionRequestResult{Common: d.common(PermissionRequest, runs)}
	var denies []string
	for _, r := range runs {
		if r.blocked {
			denies = append(denies, r.blockText())
			continue
		}
		h := specific(r)
		if h == nil || h.Decision == nil {
			continue
		}
		switch h.Decision.Behavior {
		case "deny":
			msg := h.Decision.Message
			if msg == "" {
				msg = "Denied by hook"
			}
			denies = append(denies, msg)
			res.Interrupt = res.Interrupt || h.Decision.Interrupt
		case "allow":
			if res.Decision == None {
				res.Decision = Allow
			}
			if h.Decision.UpdatedInput != nil {
				res.UpdatedInput = h.Decision.UpdatedInput
			}
			res.UpdatedPermissions = append(res.UpdatedPermissions, h.Decision.UpdatedPermissions...)
		}
	}
	if denies != nil {
		res.Decision, res.Message = Deny, d.capText(strings.Join(denies, "\n"))
		res.UpdatedInput, res.UpdatedPermissions = nil, nil
	}
	return res
}
