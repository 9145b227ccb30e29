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
	d := &dispatcher{r: r, ctx: ctx, cancel: cancel, open: r.open, ok: true}
	for i := range resp.Content {
		if resp.Content[i].Type == model.TypeToolUse {
			d.calls++
		}
	}
	for i := range resp.Content {
		b := &resp.Content[i]
		if b.Type != model.TypeToolUse || !d.ok || ctx.Err() != nil {
			continue
		}
		if d.admit(b) {
			return true // deferred: the run ends with the call pending
		}
	}
	d.flush()
	if !d.ok || ctx.Err() != nil {
		return false
	}
	r.commitResults()
	return true
}

// dispatcher is the state of one dispatch: the calls admitted to run
// together, and whether the run goes on.
type dispatcher struct {
	r           *run
	ctx         context.Context // the dispatch's: cancelled when the consumer is gone
	cancel      context.CancelFunc
	open        *openCalls
	ok          bool // false once the run must stop
	batch       []pendingCall
	interrupted bool // a denial interrupted the run: later calls do not run
	calls       int  // tool calls in the reply
}

// done takes one finished call: AfterTool, the result into the history,
// its messages to the consumer. Its steps are functions of their own (not
// inlined), each working on o in place: the AfterTool hooks and the
// consumer run under them, deep in a turn's stack, where every byte adds to
// the stack each session's goroutine grows to.
func (d *dispatcher) done(o *outcome) {
	if !d.ok {
		return
	}
	d.settle(o)
	if o.call != nil && d.r.s.cfg.Hooks.AfterTool != nil {
		d.afterTool(o)
	}
	d.deliver(o)
}

// settle completes o: a call the interrupt stopped while it ran is
// answered as stopped, and the notes on tools not loaded or referred to
// are added.
//
//go:noinline
func (d *dispatcher) settle(o *outcome) {
	r := d.r
	if o.call != nil && r.ctx.Err() != nil && o.block.IsError != nil && *o.block.IsError {
		// It failed because the run was interrupted: it was stopped
		// while running. A call that finished keeps its result.
		after := o.after
		*o = stoppedOutcome(o.call.ID, true)
		o.after = after
	}
	if o.call != nil {
		*o = r.s.noteUnloaded(o.call.Name, *o)
		*o = r.s.referTools(o.call.Name, *o)
	}
}

// afterTool runs the AfterTool hook point on o, which it may change.
//
//go:noinline
func (d *dispatcher) afterTool(o *outcome) {
	r := d.r
	out := &ToolOutput{Result: o.block, Structured: o.structured, Failed: o.block.IsError != nil && *o.block.IsError}
	if h := r.s.cfg.Hooks.AfterTool(r.toolCtx(d.ctx, o.call.ID), o.call, out); h != nil && r.halt == nil {
		r.halt = h
	}
	o.block, o.structured = out.Result, out.Structured
	o.block.ToolUseID = o.call.ID
	d.open.extra = append(d.open.extra, out.Context...)
}

// deliver puts o's result into the history and sends its messages.
//
//go:noinline
func (d *dispatcher) deliver(o *outcome) {
	r := d.r
	r.bound(o)
	m := r.userMessage([]model.Content{o.block}, false)
	m.ToolUseResult, m.ToolResultMeta = o.structured, o.meta
	r.addResult(o.block, m)
	r.numTurns++
	r.toolEnd(o)
	d.ok = r.send(m)
	if d.ok && len(o.follow) > 0 {
		d.ok = r.sendFollowUp(o.follow)
	}
	for _, a := range o.after {
		if d.ok {
			d.ok = r.send(a)
		}
	}
}

// flush runs the batch of calls admitted so far, together. A job's value
// is a *outcome.
func (d *dispatcher) flush() {
	r, batch := d.r, d.batch
	d.batch = nil
	// No call starts once the run is cancelled; closeTurn answers it.
	if len(batch) == 0 || !d.ok || d.ctx.Err() != nil {
		return
	}
	tctx := toolContext(d.ctx, r.s.Notify)
	jobs := make([]func() any, len(batch))
	for i, p := range batch {
		jobs[i] = func() any {
			o := r.execute(tctx, p)
			return &o
		}
	}
	fan := r.s.cfg.Fanout
	if fan == nil {
		fan = r.goroutines
	}
	// Calls an interrupt stopped are answered once the batch is over,
	// in the reply's order, as the reference prints them; the others
	// as they complete.
	var stopped []*outcome
	fan(jobs, func(v any) {
		r.drain()
		o := v.(*outcome)
		if o.call != nil && r.ctx.Err() != nil && o.block.IsError != nil && *o.block.IsError {
			stopped = append(stopped, o)
			return
		}
		d.done(o)
		if !d.ok || r.stopped {
			d.ok = false
			d.cancel()
		}
	})
	if len(stopped) > 0 {
		d.doneStopped(batch, stopped)
	}
}

// doneStopped takes the calls of batch the interrupt stopped, in the
// batch's order.
//
//go:noinline
func (d *dispatcher) doneStopped(batch []pendingCall, stopped []*outcome) {
	order := make(map[string]int, len(batch))
	for i, p := range batch {
		order[p.id] = i
	}
	slices.SortFunc(stopped, func(a, b *outcome) int { return order[a.call.ID] - order[b.call.ID] })
	for _, o := range stopped {
		d.done(o)
	}
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
