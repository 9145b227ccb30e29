package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// outcome is one finished tool call.
type outcome struct {
	block      model.Content // the tool_result block
	structured any
	meta       []message.ToolResultMeta
	call       *ToolCall         // set for calls that ran
	follow     []model.Content   // tool.Result.FollowUp
	after      []message.Message // StoppedError.After, sent after the result
}

// pendingCall is an authorised call waiting to run.
type pendingCall struct {
	id    string
	entry *toolEntry
	input []byte
	meta  []message.ToolResultMeta
	call  *ToolCall
}

// dispatch runs the tool calls of one reply: unknown tools, invalid input
// and denied calls get error results at once; allowed read-only calls
// (and those Config.Concurrent finds read-only) run concurrently in
// batches; other calls run alone, in order. Each result is
// emitted as it completes and all go back to the model in one user message,
// in completion order. It returns false if the run must stop (context
// cancelled or consumer gone); the calls without a result are then
// answered by closeTurn.
func (r *run) dispatch(resp *model.Response) bool {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	open := r.open
	ok := true
	done := func(o outcome) {
		if !ok {
			return
		}
		if o.call != nil && r.ctx.Err() != nil && o.block.IsError != nil && *o.block.IsError {
			// It failed because the run was interrupted: it was stopped
			// while running. A call that finished keeps its result.
			after := o.after
			o = stoppedOutcome(o.call.ID, true)
			o.after = after
		}
		if o.call != nil {
			o = r.s.noteUnloaded(o.call.Name, o)
			o = r.s.referTools(o.call.Name, o)
		}
		if o.call != nil && r.s.cfg.Hooks.AfterTool != nil {
			out := &ToolOutput{Result: o.block, Structured: o.structured, Failed: o.block.IsError != nil && *o.block.IsError}
			if h := r.s.cfg.Hooks.AfterTool(r.toolCtx(ctx, o.call.ID), o.call, out); h != nil && r.halt == nil {
				r.halt = h
			}
			o.block, o.structured = out.Result, out.Structured
			o.block.ToolUseID = o.call.ID
			open.extra = append(open.extra, out.Context...)
		}
		r.bound(&o)
		m := r.userMessage([]model.Content{o.block}, false)
		m.ToolUseResult, m.ToolResultMeta = o.structured, o.meta
		r.addResult(o.block, m)
		r.numTurns++
		r.toolEnd(o)
		ok = r.send(m)
		if ok && len(o.follow) > 0 {
			ok = r.sendFollowUp(o.follow)
		}
		for _, a := range o.after {
			if ok {
				ok = r.send(a)
			}
		}
	}
	var batch []pendingCall
	flush := func() {
		// No call starts once the run is cancelled; closeTurn answers it.
		if len(batch) == 0 || !ok || ctx.Err() != nil {
			batch = nil
			return
		}
		tctx := toolContext(ctx, r.s.Notify)
		jobs := make([]func() any, len(batch))
		for i, p := range batch {
			jobs[i] = func() any { return r.execute(tctx, p) }
		}
		fan := r.s.cfg.Fanout
		if fan == nil {
			fan = r.goroutines
		}
		// Calls an interrupt stopped are answered once the batch is over,
		// in the reply's order, as the reference prints them; the others
		// as they complete.
		var stopped []outcome
		fan(jobs, func(v any) {
			r.drain()
			o := v.(outcome)
			if o.call != nil && r.ctx.Err() != nil && o.block.IsError != nil && *o.block.IsError {
				stopped = append(stopped, o)
				return
			}
			done(o)
			if !ok || r.stopped {
				ok = false
				cancel()
			}
		})
		order := make(map[string]int, len(batch))
		for i, p := range batch {
			order[p.id] = i
		}
		slices.SortFunc(stopped, func(a, b outcome) int { return order[a.call.ID] - order[b.call.ID] })
		for _, o := range stopped {
			done(o)
		}
		batch = nil
	}
	interrupted := false
	calls := 0
	for _, b := range resp.Content {
		if b.Type == model.TypeToolUse {
			calls++
		}
	}
	for _, b := range resp.Content {
		if b.Type != model.TypeToolUse || !ok || ctx.Err() != nil {
			continue
		}
		r.toolBegin(ctx, b)
		if interrupted {
			done(errorOutcome(b.ID, "The run was interrupted before this tool could run.", nil))
			continue
		}
		e, known := r.s.lookup(b.Name)
		if !known {
			msg := "Error: No such tool available: " + b.Name
			done(errorOutcome(b.ID, "<tool_use_error>"+msg+"</tool_use_error>", msg))
			continue
		}
		input, err := r.validate(e, b)
		if err != nil {
			text := err.Error()
			if b.Name == StructuredOutputTool && r.s.cfg.OutputSchema != nil {
				text = schemaMismatch(err)
			}
			done(r.s.noteUnloaded(b.Name, errorOutcome(b.ID, "<tool_use_error>"+text+"</tool_use_error>", "Error: "+text)))
			continue
		}
		d := Decision{Allow: true, Source: "config", ReasonType: "mode"}
		internal := b.Name == StructuredOutputTool && r.s.cfg.OutputSchema != nil
		if r.s.cfg.Authorize != nil && !internal {
			d = r.s.cfg.Authorize(r.toolCtx(ctx, b.ID), &ToolCall{ID: b.ID, Name: b.Name, Input: input, Tool: e.tool, Alone: calls == 1})
			if r.ctx.Err() != nil {
				continue // interrupted while deciding: answered as stopped (closeInterrupted)
			}
		}
		if d.Defer {
			if calls == 1 {
				// The call stays pending: no result, no context, the
				// run ends (see resumeDeferred).
				r.deferred = &message.DeferredToolUse{ID: b.ID, Name: b.Name, Input: deferredInput(b.Input)}
				return true
			}
			d.Allow = false
		}
		open.extra = append(open.extra, d.Context...)
		if d.Halt != nil && r.halt == nil {
			r.halt = d.Halt
		}
		meta := []message.ToolResultMeta{{ID: b.ID, PermissionDecision: message.PermissionDecision{
			Decision: "accept", Source: d.Source, ReasonType: d.ReasonType}}}
		if !d.Allow {
			meta[0].PermissionDecision.Decision = "reject"
			meta[0].NonExecutionKind = "permission-rule"
			r.denials = append(r.denials, message.PermissionDenial{ToolName: b.Name, ToolUseID: b.ID, ToolInput: input})
			if !d.Quiet && !r.send(&message.System{Subtype: message.SubtypePermissionDenied, SessionID: r.s.cfg.Env.SessionID,
				UUID: r.s.cfg.NewID(), PermissionDenied: &message.PermissionDenied{
					ToolName: b.Name, ToolUseID: b.ID, Message: d.Message, DecisionReasonType: d.ReasonType}}) {
				ok = false
				break
			}
			o := errorOutcome(b.ID, d.Message, "Error: "+d.Message)
			o.meta = meta
			done(o)
			if d.Interrupt {
				interrupted = true
				if r.halt == nil {
					r.halt = &Halt{Reason: "The run was interrupted when " + b.Name + " was denied.", interrupt: true}
				}
			}
			continue
		}
		if d.Input != nil {
			if in, err := e.schema.Validate(b.Name, d.Input); err == nil {
				input = in
			} else {
				done(errorOutcome(b.ID, "<tool_use_error>The input given by the permission check is invalid: "+err.Error()+"</tool_use_error>", "Error: "+err.Error()))
				continue
			}
		}
		call := &ToolCall{ID: b.ID, Name: b.Name, Input: input, Tool: e.tool}
		p := pendingCall{id: b.ID, entry: e, input: input, meta: meta, call: call}
		if e.info().ReadOnly || r.s.cfg.Concurrent != nil && r.s.cfg.Concurrent(call) {
			batch = append(batch, p)
			continue
		}
		flush()
		batch = []pendingCall{p}
		flush()
	}
	flush()
	if !ok || ctx.Err() != nil {
		return false
	}
	r.commitResults()
	return true
}

// A Fanout runs jobs concurrently and hands each one's value to done as it
// completes, in completion order, on the caller's goroutine; it returns
// once every job has completed and done has seen it. A job never panics
// (execute turns a panic into an outcome) and returns promptly once the
// run's context is done.
type Fanout func(jobs []func() any, done func(v any))

// goroutines is the default Fanout: a goroutine per job. While it waits,
// it also emits the notes that arrive (a background subagent's progress),
// so they stream before the calls end.
func (r *run) goroutines(jobs []func() any, done func(any)) {
	ch := make(chan any, len(jobs))
	wake := r.s.notes.wakeChan()
	for _, job := range jobs {
		go func() { ch <- job() }()
	}
	for left := len(jobs); left > 0; {
		select {
		case v := <-ch:
			left--
			done(v)
		case <-wake:
			r.drain()
		}
	}
}

func errorOutcome(id, text string, structured any) outcome {
	t := true
	return outcome{block: model.Content{Type: model.TypeToolResult, ToolUseID: id, Text: text, IsError: &t},
		structured: structured}
}

// execute runs one call, turning a panic or an error into an is_error result.
func (r *run) execute(ctx context.Context, p pendingCall) (o outcome) {
	name := p.entry.name
	defer func() {
		if v := recover(); v != nil {
			msg := fmt.Sprintf("Error: tool %s failed unexpectedly: %v", name, v)
			o = errorOutcome(p.id, msg, msg)
			o.meta, o.call = p.meta, p.call
		}
	}()
	res, err := p.entry.tool.Run(r.toolRunCtx(ctx, p.id), &tool.Call{ID: p.id, Input: p.input, Env: r.s.cfg.Env})
	if err != nil {
		text := err.Error()
		var ve *tool.ValidationError
		if errors.As(err, &ve) {
			text = "<tool_use_error>" + text + "</tool_use_error>"
		} else if !strings.HasPrefix(text, "Error") {
			text = "Error: " + text
		}
		o = errorOutcome(p.id, text, strings.TrimSuffix(strings.TrimPrefix(text, "<tool_use_error>"), "</tool_use_error>"))
		o.meta, o.call = p.meta, p.call
		if se := (*StoppedError)(nil); errors.As(err, &se) {
			o.after = se.After
		}
		return o
	}
	block := model.Content{Type: model.TypeToolResult, ToolUseID: p.id}
	if len(res.Content) == 1 && res.Content[0].Type == model.TypeText && !res.ListContent {
		block.Text = res.Content[0].Text
	} else if len(res.Content) > 0 {
		block.Blocks = res.Content
	}
	switch {
	case res.IsError:
		t := true
		block.IsError = &t
	case p.entry.info().AlwaysReportError:
		f := false
		block.IsError = &f
	}
	structured := res.Structured
	if structured == nil && res.IsError {
		text := res.Text()
		if !strings.HasPrefix(text, "Error") {
			text = "Error: " + text
		}
		structured = text
	}
	return outcome{block: block, structured: structured, meta: p.meta, call: p.call, follow: res.FollowUp}
}

// toolContext is the context tools run under: it carries the emitter of
// the session's stream, and drops what a host set for this run alone
// (the prompt's id, the fold), so that a subagent's run, started by a
// tool, neither takes the parent prompt's uuid nor the parent's queue.
func toolContext(ctx context.Context, notify func(message.Message)) context.Context {
	ctx = context.WithValue(ctx, emitterKey{}, notify)
	ctx = context.WithValue(ctx, promptIDKey{}, "")
	return context.WithValue(ctx, foldKey{}, nil)
}
