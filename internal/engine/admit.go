package engine

import (
	"encoding/json"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// The admission of a tool call: the checks before it may run, in the
// reply's order (unknown tool, invalid input, the Authorize decision, the
// input a decision replaced).
//
// The functions are split, and not inlined, for the stack: Authorize (the
// permission checker, hooks, a CanUseTool callback) runs on the turn's
// goroutine under dispatch and admit, so their frames hold only what
// reaching it needs. The outcomes of calls answered without running are
// built in functions of their own (answer, deny), not in admit's frame:
// every byte there adds to the stack each session's goroutine grows to.

// admit takes tool call b of the reply: answered at once (unknown tool,
// invalid input, denied), added to the batch to run (read-only calls), or
// run at once after the batch before it. It reports true when the call is
// deferred and the run ends with it pending.
//
//go:noinline
func (d *dispatcher) admit(b *model.Content) bool {
	d.r.toolBegin(d.ctx, b)
	if d.interrupted {
		d.answer(b.ID, "The run was interrupted before this tool could run.", nil)
		return false
	}
	e, input, ok := d.check(b)
	if !ok {
		return false
	}
	dec := d.decide(b, e, input)
	if dec == nil {
		return false // interrupted while deciding: answered as stopped (closeInterrupted)
	}
	return d.apply(b, e, input, dec)
}

// check finds call b's tool and checks its input against the tool's
// schema: the tool and the input to use, or false after answering the call.
//
//go:noinline
func (d *dispatcher) check(b *model.Content) (*toolEntry, json.RawMessage, bool) {
	r := d.r
	e, known := r.s.lookup(b.Name)
	if !known {
		msg := "Error: No such tool available: " + b.Name
		d.answer(b.ID, "<tool_use_error>"+msg+"</tool_use_error>", msg)
		return nil, nil, false
	}
	input, err := r.validate(e, b)
	if err != nil {
		d.invalid(b, err)
		return nil, nil, false
	}
	return e, input, true
}

// apply carries out dec, the decision on call b with input: see admit.
//
//go:noinline
func (d *dispatcher) apply(b *model.Content, e *toolEntry, input json.RawMessage, dec *Decision) bool {
	r := d.r
	if dec.Defer {
		if d.calls == 1 {
			// The call stays pending: no result, no context, the
			// run ends (see resumeDeferred).
			r.deferred = &message.DeferredToolUse{ID: b.ID, Name: b.Name, Input: deferredInput(b.Input)}
			return true
		}
		dec.Allow = false
	}
	d.open.extra = append(d.open.extra, dec.Context...)
	if dec.Halt != nil && r.halt == nil {
		r.halt = dec.Halt
	}
	meta := []message.ToolResultMeta{{ID: b.ID, PermissionDecision: message.PermissionDecision{
		Decision: "accept", Source: dec.Source, ReasonType: dec.ReasonType}}}
	if !dec.Allow {
		d.deny(b, dec, meta, input)
		return false
	}
	if dec.Input != nil {
		in, ok := d.replaced(b, e, dec.Input)
		if !ok {
			return false
		}
		input = in
	}
	call := &ToolCall{ID: b.ID, Name: b.Name, Input: input, Tool: e.tool}
	p := pendingCall{id: b.ID, entry: e, input: input, meta: meta, call: call}
	if e.info().ReadOnly || r.s.cfg.Concurrent != nil && r.s.cfg.Concurrent(call) {
		d.batch = append(d.batch, p)
		return false
	}
	d.flush()
	d.batch = []pendingCall{p}
	d.flush()
	return false
}

// decide asks Authorize about call b with input (not the structured output
// tool, which is the loop's own); nil when the run was interrupted
// meanwhile. The decision is returned on the heap so that admit's frame,
// under Authorize, holds none.
//
//go:noinline
func (d *dispatcher) decide(b *model.Content, e *toolEntry, input json.RawMessage) *Decision {
	r := d.r
	dec := &Decision{Allow: true, Source: "config", ReasonType: "mode"}
	internal := b.Name == StructuredOutputTool && r.s.cfg.OutputSchema != nil
	if r.s.cfg.Authorize != nil && !internal {
		*dec = r.s.cfg.Authorize(r.toolCtx(d.ctx, b.ID), &ToolCall{ID: b.ID, Name: b.Name, Input: input, Tool: e.tool, Alone: d.calls == 1})
		if r.ctx.Err() != nil {
			return nil
		}
	}
	return dec
}

// answer gives call id an error result without running it.
//
//go:noinline
func (d *dispatcher) answer(id, text string, structured any) {
	o := errorOutcome(id, text, structured)
	d.done(&o)
}

// invalid answers call b, whose input its tool's schema refused.
//
//go:noinline
func (d *dispatcher) invalid(b *model.Content, err error) {
	r := d.r
	text := err.Error()
	if b.Name == StructuredOutputTool && r.s.cfg.OutputSchema != nil {
		text = schemaMismatch(err)
	}
	o := r.s.noteUnloaded(b.Name, errorOutcome(b.ID, "<tool_use_error>"+text+"</tool_use_error>", "Error: "+text))
	d.done(&o)
}

// deny answers call b, which dec denied: the denial is recorded and
// announced, and an interrupting denial stops the calls after it.
//
//go:noinline
func (d *dispatcher) deny(b *model.Content, dec *Decision, meta []message.ToolResultMeta, input json.RawMessage) {
	r := d.r
	meta[0].PermissionDecision.Decision = "reject"
	meta[0].NonExecutionKind = "permission-rule"
	r.denials = append(r.denials, message.PermissionDenial{ToolName: b.Name, ToolUseID: b.ID, ToolInput: input})
	if !dec.Quiet && !r.send(&message.System{Subtype: message.SubtypePermissionDenied, SessionID: r.s.cfg.Env.SessionID,
		UUID: r.s.cfg.NewID(), PermissionDenied: &message.PermissionDenied{
			ToolName: b.Name, ToolUseID: b.ID, Message: dec.Message, DecisionReasonType: dec.ReasonType}}) {
		d.ok = false
		return
	}
	o := errorOutcome(b.ID, dec.Message, "Error: "+dec.Message)
	o.meta = meta
	d.done(&o)
	if dec.Interrupt {
		d.interrupted = true
		if r.halt == nil {
			r.halt = &Halt{Reason: "The run was interrupted when " + b.Name + " was denied.", interrupt: true}
		}
	}
}

// replaced checks the input a decision gave call b against its tool's
// schema: the input to run with, or false after answering the call.
//
//go:noinline
func (d *dispatcher) replaced(b *model.Content, e *toolEntry, given json.RawMessage) (json.RawMessage, bool) {
	in, err := e.schema.Validate(b.Name, given)
	if err != nil {
		o := errorOutcome(b.ID, "<tool_use_error>The input given by the permission check is invalid: "+err.Error()+"</tool_use_error>", "Error: "+err.Error())
		d.done(&o)
		return nil, false
	}
	return in, true
}
