package engine

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/observe"
)

// This file reports a run to Config.Observer (package observe). Every
// helper is a method of run that returns at once when r.obs is nil, the
// case without an Observer, so that the loop pays a nil check for it.
//
// The spans of a run: the session span (a subagent span in a subagent's
// session) for the whole of Run; a turn span for each round trip of the
// loop, from the model call to the tool results of its reply (see
// turnBegin); inside it the model span of each call of the provider (one
// per model tried, retries as events) and a tool span per tool_use block,
// from its authorisation to its result; compaction spans under the step
// that compacted. While a turn or a compaction is open, r.ctx carries its
// span, so the hooks and tools it runs start their spans under it; the
// spans only add values to the context, never a cancellation.

// runObs is what a run with an Observer keeps of its open spans.
type runObs struct {
	o       observe.Observer
	content observe.Content
	session observe.Span
	base    context.Context // r.ctx of the session span
	turn    observe.Span
	turns   int
	model   observe.Span
	compact observe.Span
	// overloaded is the model of the turn's last call, when it failed
	// overloaded: the next call is its fallback.
	overloaded string
	// tools are the open tool spans by tool_use id; mu guards it, as tools
	// look their context up from their own goroutines.
	mu    sync.Mutex
	tools map[string]toolObs
}

type toolObs struct {
	ctx  context.Context
	span observe.Span
}

// errToolFailed ends the span of a call whose result is an error, when the
// result's text may not be attached.
var errToolFailed = errors.New("the tool call failed")

// errNotRun ends the span of a call the run ended before it ran.
var errNotRun = errors.New("the tool call did not run")

// observeStart opens the session span (a subagent span for a subagent) and
// makes r.ctx carry it.
func (r *run) observeStart(prompt []model.Content) {
	o := r.s.cfg.Observer
	if o == nil {
		return
	}
	s := r.s
	ob := &runObs{o: o, content: observe.ContentOf(o), tools: map[string]toolObs{}}
	st := observe.Start{Kind: observe.KindSession, Name: "invoke_agent agentloop"}
	agent := "agentloop"
	if s.cfg.ParentToolUseID != nil {
		st.Kind, st.Name, agent = observe.KindSubagent, "invoke_agent subagent", "subagent"
	}
	text := promptText(prompt)
	st.Attrs = []observe.Attr{
		observe.String(observe.AttrSystem, observe.System),
		observe.String(observe.AttrOperationName, observe.OpInvokeAgent),
		observe.String(observe.AttrAgentName, agent),
		observe.String(observe.AttrSessionID, s.cfg.Env.SessionID),
		observe.String(observe.AttrConversationID, s.cfg.Env.SessionID),
		observe.String(observe.AttrRequestModel, s.Model()),
		observe.Int(observe.AttrPromptLength, int64(len(text))),
	}
	if s.cfg.ParentToolUseID != nil {
		st.Attrs = append(st.Attrs, observe.String(observe.AttrParentToolUseID, *s.cfg.ParentToolUseID))
	}
	if ob.content.UserPrompts {
		st.Attrs = append(st.Attrs, observe.String(observe.AttrPrompt, text))
	}
	r.ctx, ob.session = o.Start(r.ctx, st)
	ob.base = r.ctx
	r.obs = ob
}

// promptText is the text of a prompt's text blocks, one per line. Not
// inlined: see blockedPrompt.
//
//go:noinline
func promptText(prompt []model.Content) string {
	var parts []string
	for _, b := range prompt {
		if b.Type == model.TypeText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// observeEnd closes whatever is still open and the session span, with the
// run's outcome.
func (r *run) observeEnd(e *ending) {
	ob := r.obs
	if ob == nil {
		return
	}
	r.turnEnd()
	ob.mu.Lock()
	open := ob.tools
	ob.tools = map[string]toolObs{}
	ob.mu.Unlock()
	for id, t := range open {
		attrs := []observe.Attr{observe.Bool(observe.AttrToolRan, false)}
		if r.deferred != nil && r.deferred.ID == id {
			attrs = append(attrs, observe.String(observe.AttrPermissionDecision, "defer"))
		}
		t.span.SetAttrs(attrs...)
		t.span.End(errNotRun)
	}
	err := e.err
	if res := e.res; res != nil {
		ob.session.SetAttrs(resultAttrs(res)...)
		if err == nil && res.IsError {
			err = resultError(res)
		}
	}
	ob.session.End(err)
}

// resultAttrs are the attributes of a session span from its result.
func resultAttrs(res *message.Result) []observe.Attr {
	attrs := []observe.Attr{
		observe.String(observe.AttrResultSubtype, res.Subtype),
		observe.Bool(observe.AttrIsError, res.IsError),
		observe.Int(observe.AttrNumTurns, int64(res.NumTurns)),
		observe.Float(observe.AttrTotalCost, res.TotalCostUSD),
		observe.Int(observe.AttrInputTokens, res.Usage.InputTokens),
		observe.Int(observe.AttrOutputTokens, res.Usage.OutputTokens),
		observe.Int(observe.AttrCacheReadTokens, res.Usage.CacheReadInputTokens),
		observe.Int(observe.AttrCacheCreateTokens, res.Usage.CacheCreationInputTokens),
	}
	if res.TerminalReason != "" {
		attrs = append(attrs, observe.String(observe.AttrTerminalReason, string(res.TerminalReason)))
	}
	return attrs
}

// resultError is the error a failed result ends its span with: its
// subtype and first error, which are the loop's words, not the model's.
func resultError(res *message.Result) error {
	text := res.Subtype
	if len(res.Errors) > 0 {
		text += ": " + res.Errors[0]
	}
	return errors.New(text)
}

// turnBegin opens the span of the turn about to call the model; the turn
// lasts until the next turn begins or the run ends.
func (r *run) turnBegin() {
	ob := r.obs
	if ob == nil {
		return
	}
	r.turnEnd()
	ob.turns++
	ob.overloaded = ""
	r.ctx, ob.turn = ob.o.Start(ob.base, observe.Start{Kind: observe.KindTurn, Name: "agentloop.turn",
		Attrs: []observe.Attr{observe.Int(observe.AttrTurn, int64(ob.turns))}})
}

// turnEnd closes the open turn span, if any.
func (r *run) turnEnd() {
	ob := r.obs
	if ob == nil || ob.turn == nil {
		return
	}
	ob.turn.End(nil)
	ob.turn = nil
	r.ctx = ob.base
}

// modelBegin opens the span of one call of the provider on modelID.
func (r *run) modelBegin(modelID string) {
	ob := r.obs
	if ob == nil {
		return
	}
	attrs := []observe.Attr{
		observe.String(observe.AttrSystem, observe.System),
		observe.String(observe.AttrOperationName, observe.OpChat),
		observe.String(observe.AttrRequestModel, modelID),
		observe.Int(observe.AttrTurn, int64(ob.turns)),
	}
	if ob.overloaded != "" {
		attrs = append(attrs, observe.String(observe.AttrFallbackFrom, ob.overloaded))
	}
	_, ob.model = ob.o.Start(r.ctx, observe.Start{Kind: observe.KindModel, Name: "chat " + modelID, Attrs: attrs})
}

// modelEnd closes the model span with the reply's model, id, stop reason,
// usage and cost, or with the call's error.
func (r *run) modelEnd(modelID string, resp *model.Response, err error) {
	ob := r.obs
	if ob == nil || ob.model == nil {
		return
	}
	sp := ob.model
	ob.model = nil
	ob.overloaded = ""
	var apiErr *model.APIError
	if errors.As(err, &apiErr) && apiErr.Kind() == "overloaded" {
		ob.overloaded = modelID
	}
	if resp != nil && err == nil {
		m := resp.Model
		if m == "" {
			m = modelID
		}
		sp.SetAttrs(r.s.usageAttrs(m, resp)...)
	}
	sp.End(err)
}

// usageAttrs are the attributes of a successful model call; its cost is
// the one AddUsage counts.
func (s *Session) usageAttrs(modelID string, resp *model.Response) []observe.Attr {
	price, _, _ := s.cfg.Prices.Quote(modelID)
	u := resp.Usage
	attrs := []observe.Attr{
		observe.String(observe.AttrResponseModel, modelID),
		observe.String(observe.AttrResponseID, resp.ID),
		observe.Int(observe.AttrInputTokens, u.InputTokens),
		observe.Int(observe.AttrOutputTokens, u.OutputTokens),
		observe.Int(observe.AttrCacheReadTokens, u.CacheReadInputTokens),
		observe.Int(observe.AttrCacheCreateTokens, u.CacheCreationInputTokens),
		observe.Float(observe.AttrCost, price.Cost(u)),
	}
	if resp.StopReason != "" {
		attrs = append(attrs, observe.Strings(observe.AttrFinishReasons, resp.StopReason))
	}
	return attrs
}

// modelRetry records a retried attempt on the open model span.
func (r *run) modelRetry(ri model.RetryInfo) {
	ob := r.obs
	if ob == nil || ob.model == nil {
		return
	}
	attrs := []observe.Attr{
		observe.Int(observe.AttrRetryAttempt, int64(ri.Attempt)),
		observe.Int(observe.AttrRetryMax, int64(ri.MaxRetries)),
		observe.Int(observe.AttrRetryStatus, int64(ri.Status)),
		observe.String(observe.AttrRetryKind, ri.Kind),
		observe.Int(observe.AttrRetryDelayMs, ri.Delay.Milliseconds()),
	}
	ob.model.Event(observe.EventRetry, attrs...)
}

// toolBegin opens the span of the call b of the reply being dispatched,
// under ctx, the dispatch's context.
func (r *run) toolBegin(ctx context.Context, b *model.Content) {
	ob := r.obs
	if ob == nil {
		return
	}
	attrs := []observe.Attr{
		observe.String(observe.AttrOperationName, observe.OpExecuteTool),
		observe.String(observe.AttrToolName, b.Name),
		observe.String(observe.AttrToolCallID, b.ID),
	}
	if ob.content.ToolDetails {
		attrs = append(attrs, observe.String(observe.AttrToolArguments, string(b.Input)))
	}
	tctx, sp := ob.o.Start(ctx, observe.Start{Kind: observe.KindTool, Name: "execute_tool " + b.Name, Attrs: attrs})
	ob.mu.Lock()
	ob.tools[b.ID] = toolObs{ctx: tctx, span: sp}
	ob.mu.Unlock()
}

// toolCtx returns the context of the open span of call id, for the steps
// of the call (its authorisation, its hooks), or ctx when there is none.
func (r *run) toolCtx(ctx context.Context, id string) context.Context {
	ob := r.obs
	if ob == nil {
		return ctx
	}
	ob.mu.Lock()
	t, ok := ob.tools[id]
	ob.mu.Unlock()
	if !ok {
		return ctx
	}
	return t.ctx
}

// toolRunCtx is toolCtx for the tool's own run: the call's span context
// with what toolContext adds, in place of ctx (which toolContext made from
// the same dispatch context).
func (r *run) toolRunCtx(ctx context.Context, id string) context.Context {
	if r.obs == nil {
		return ctx
	}
	if tctx := r.toolCtx(ctx, id); tctx != ctx {
		return toolContext(tctx, r.s.Notify)
	}
	return ctx
}

// toolEnd closes the span of the call o answers, with its outcome and
// permission decision.
func (r *run) toolEnd(o *outcome) {
	ob := r.obs
	if ob == nil {
		return
	}
	id := o.block.ToolUseID
	ob.mu.Lock()
	t, ok := ob.tools[id]
	delete(ob.tools, id)
	ob.mu.Unlock()
	if !ok {
		return
	}
	isErr := o.block.IsError != nil && *o.block.IsError
	attrs := []observe.Attr{
		observe.Bool(observe.AttrToolIsError, isErr),
		observe.Bool(observe.AttrToolRan, o.call != nil),
	}
	if len(o.meta) > 0 {
		d := o.meta[0].PermissionDecision
		decision := "allow"
		if d.Decision == "reject" {
			decision = "deny"
		}
		attrs = append(attrs, observe.String(observe.AttrPermissionDecision, decision),
			observe.String(observe.AttrPermissionSource, d.Source),
			observe.String(observe.AttrPermissionReason, d.ReasonType))
	}
	var text string
	if ob.content.ToolDetails {
		text = resultText(o.block)
		attrs = append(attrs, observe.String(observe.AttrToolResult, text))
	}
	t.span.SetAttrs(attrs...)
	var err error
	if isErr {
		err = errToolFailed
		if ob.content.ToolDetails && text != "" {
			err = errors.New(text)
		}
	}
	t.span.End(err)
}

// resultText is the text of a tool_result block.
func resultText(b model.Content) string {
	if len(b.Blocks) == 0 {
		return b.Text
	}
	var parts []string
	for _, c := range b.Blocks {
		if c.Type == model.TypeText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// noCompaction is what observeCompaction returns without an Observer.
var noCompaction = func() {}

// observeCompaction opens a compaction span and makes r.ctx carry it until
// the function it returns is called, which closes it. Use as
// defer r.observeCompaction(trigger)().
func (r *run) observeCompaction(trigger string) func() {
	ob := r.obs
	if ob == nil {
		return noCompaction
	}
	parent := r.ctx
	var sp observe.Span
	r.ctx, sp = ob.o.Start(parent, observe.Start{Kind: observe.KindCompaction, Name: "agentloop.compaction",
		Attrs: []observe.Attr{observe.String(observe.AttrCompactTrigger, trigger), observe.Bool(observe.AttrCompacted, false)}})
	ob.compact = sp
	return func() {
		r.ctx = parent
		ob.compact = nil
		sp.End(nil)
	}
}

// compacted records a compaction's outcome on its span: the estimated
// context before and after, and the summary call's usage and cost.
func (r *run) compacted(pre, post int64, resp *model.Response) {
	ob := r.obs
	if ob == nil || ob.compact == nil {
		return
	}
	attrs := []observe.Attr{
		observe.Bool(observe.AttrCompacted, true),
		observe.Int(observe.AttrCompactPreTokens, pre),
		observe.Int(observe.AttrCompactPostTokens, post),
	}
	ob.compact.SetAttrs(append(attrs, r.s.usageAttrs(resp.Model, resp)...)...)
}
