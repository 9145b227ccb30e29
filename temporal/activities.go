package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/spill"
	rec "github.com/agentloop/agentloop/internal/transcript"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// errModel is the error type of a model call that failed for good (the
// provider's retries are spent, or the request was refused): Temporal does
// not retry it.
const errModel = "agentloop.ModelError"

// InterruptedByWorker is the text of the result a state-changing tool call
// gets when the worker running it died: the call may have done part of its
// work, so it is not run again.
const InterruptedByWorker = "The call was interrupted by a worker failure and was not run again, " +
	"because it may change state and may have partly run. Check what it was to change before you retry it."

// Activities are the worker's side of a session workflow: they hold the
// live sessions (one conversation.Session per workflow, built from the
// worker's Options with the workflow's SessionInput on top) and carry out
// the loop's effects with them. A worker that did not build a session
// (it started after another died) builds it on first use.
//
// Methods are safe for concurrent use.
type Activities struct {
	base   *agentloop.Options
	baseOf func(SessionInput) (*agentloop.Options, error) // see Worker.SessionBase; nil: base
	client client.Client                                  // signals the partial events of a model call to its workflow

	mu        sync.Mutex
	sessions  map[string]*conversation.Session // by workflow id
	recorders map[string]*rec.Recorder         // durable transcripts (transcript.go), by workflow id
	modes     map[string]string                // the client's mode last applied, by workflow id
}

// newActivities returns the activities of a worker whose sessions start
// from base.
func newActivities(c client.Client, base *agentloop.Options) *Activities {
	return &Activities{base: base, client: c, sessions: map[string]*conversation.Session{}, modes: map[string]string{},
		recorders: map[string]*rec.Recorder{}}
}

// session is the live session of the workflow the activity of ctx belongs
// to.
func (a *Activities) session(ctx context.Context, in SessionInput) (*conversation.Session, error) {
	id := activity.GetInfo(ctx).WorkflowExecution.ID
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[id]; ok {
		return s, nil
	}
	base := a.base
	if a.baseOf != nil {
		b, err := a.baseOf(in)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError("agentloop/temporal: the worker's options for the session", "agentloop.SessionError", err)
		}
		base = b
	}
	cfg, err := conversation.FromOptions(overlay(base, in))
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("agentloop/temporal: the worker's options", "agentloop.SessionError", err)
	}
	s, err := conversation.NewSession(ctx, cfg)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("agentloop/temporal: starting the session", "agentloop.SessionError", err)
	}
	a.sessions[id] = s
	return s, nil
}

// Describe returns what the workflow runs the session's loop from.
func (a *Activities) Describe(ctx context.Context, in SessionInput) (*Description, error) {
	s, err := a.session(ctx, in)
	if err != nil {
		return nil, err
	}
	c := s.EngineConfig()
	d := &Description{Model: c.Model, FallbackModels: c.FallbackModels, System: c.System, OpeningContext: c.OpeningContext,
		MaxTurns: c.MaxTurns, MaxBudgetUSD: c.MaxBudgetUSD, MaxTokens: c.MaxTokens, Thinking: c.Thinking, Effort: c.Effort,
		Betas: c.Betas, Cwd: c.Env.Cwd, Init: s.InitMessage()}
	for _, t := range c.Tools {
		d.Tools = append(d.Tools, t.Info())
	}
	d.OutputSchema, d.MaxStructuredRetries = c.OutputSchema, c.MaxStructuredRetries
	if c.Deferred != nil {
		d.Deferred = c.Deferred.Infos()
	}
	d.Partial = c.Partial
	d.Hooks = a.baseOf != nil || mayHaveHooks(a.base)
	d.Persist = a.base != nil && a.base.SessionStore != nil
	if cp := c.Compaction; cp != nil {
		d.Compaction = &CompactionSpec{Disabled: cp.Disabled, Window: cp.Window, Instructions: cp.Instructions}
	}
	d.NotCarried = notCarried(d.Hooks)
	return d, nil
}

// mayHaveHooks says whether sessions from base may have hooks: from
// Options.Hooks, or from the settings files they read.
func mayHaveHooks(base *agentloop.Options) bool {
	return base == nil || len(base.Hooks) > 0 || base.SettingSources == nil || len(base.SettingSources) > 0
}

// notCarried names what the worker's sessions have on that the durable
// loop does not do yet.
func notCarried(hooks bool) []string {
	var out []string
	if hooks {
		out = append(out, "the SessionEnd and SessionStart hooks of /clear, if any are configured (the other hook events run)")
	}
	return out
}

// CallModel sends one request with the session's provider and returns the
// whole reply. It heartbeats while the reply streams, so a worker that
// dies mid-reply is noticed and the call is made again on another.
func (a *Activities) CallModel(ctx context.Context, call ModelCall) (*ModelReply, error) {
	s, err := a.session(ctx, call.Session)
	if err != nil {
		return nil, err
	}
	stop := heartbeat(ctx)
	defer stop()
	var h model.Handler = model.NopHandler{}
	var sink *partialSink
	if call.Partial && a.client != nil {
		sink = newPartialSink(ctx, a.client)
		h = sink
	}
	resp, err := s.EngineConfig().Provider.Stream(ctx, call.Request, h)
	reply := &ModelReply{Response: resp}
	if sink != nil {
		reply.Events = sink.close()
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), errModel, err)
	}
	return reply, nil
}

// RunTool runs one tool call with the session's tool. A state-changing
// call whose first attempt was cut short (the worker died) is not run
// again: it gets an is_error result saying so (InterruptedByWorker). A
// read-only call is simply run again.
func (a *Activities) RunTool(ctx context.Context, call ToolRun) (*tool.Result, error) {
	if !call.ReadOnly && activity.GetInfo(ctx).Attempt > 1 {
		r := tool.Error(InterruptedByWorker)
		return &r, nil
	}
	s, err := a.session(ctx, call.Session)
	if err != nil {
		return nil, err
	}
	c := s.EngineConfig()
	var t tool.Tool
	for _, x := range c.Tools {
		if x.Info().Name == call.Name {
			t = x
		}
	}
	if t == nil {
		r := tool.Error(fmt.Sprintf("No such tool on this worker: %s", call.Name))
		return &r, nil
	}
	stop := heartbeat(ctx)
	defer stop()
	r, err := runTool(ctx, t, &tool.Call{ID: call.ID, Input: call.Input, Env: c.Env})
	if err != nil {
		r = tool.Error(err.Error())
	}
	bound(&r, call.ID, t.Info().MaxResultChars, c.Env.ResultsDir)
	return &r, nil
}

// bound keeps an oversized result out of the workflow, as the in-process
// loop keeps it out of the context: text over the tool's limit is saved
// in the worker session's results directory and replaced by a preview
// with the file's path (package spill). The workflow's loop has no
// results directory, so it passes the result on as it comes.
func bound(r *tool.Result, id string, maxChars int, dir string) {
	b := model.Content{Type: model.TypeToolResult, ToolUseID: id, Blocks: r.Content}
	single := len(r.Content) == 1 && r.Content[0].Type == model.TypeText && !r.ListContent
	if single {
		b.Blocks, b.Text = nil, r.Content[0].Text
	}
	out, changed := spill.Apply(b, spill.Limit(maxChars), dir)
	if !changed {
		return
	}
	if single {
		r.Content = []model.Content{model.TextBlock(out.Text)}
		return
	}
	r.Content = out.Blocks
}

// runTool runs t, turning a panic into an error.
func runTool(ctx context.Context, t tool.Tool, call *tool.Call) (r tool.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the tool panicked: %v", p)
		}
	}()
	return t.Run(ctx, call)
}

// Authorize makes the session's permission decision on one call: rules,
// mode, hooks and CanUseTool. When the client answers permission requests
// and the check needs one, the outcome is an Ask instead; the workflow
// calls again with the client's answer.
func (a *Activities) Authorize(ctx context.Context, call AuthorizeCall) (*AuthorizeOutcome, error) {
	s, err := a.session(ctx, call.Session)
	if err != nil {
		return nil, err
	}
	if err := a.applyMode(ctx, s, call.Session.PermissionMode); err != nil {
		return nil, err
	}
	c := s.EngineConfig()
	d := engine.Decision{Allow: true, Source: "config", ReasonType: "mode"}
	if c.Authorize != nil {
		var t tool.Tool
		for _, x := range c.Tools {
			if x.Info().Name == call.Name {
				t = x
			}
		}
		if t == nil {
			return nil, errors.New("agentloop/temporal: no tool " + call.Name + " on this worker")
		}
		slot := &askSlot{answer: call.Answer}
		d = c.Authorize(context.WithValue(ctx, askKey{}, slot),
			&engine.ToolCall{ID: call.ID, Name: call.Name, Input: call.Input, Tool: t, Alone: call.Alone})
		if slot.asked != nil && call.Answer == nil {
			return &AuthorizeOutcome{Ask: &Ask{ID: call.ID, Request: *slot.asked}}, nil
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("agentloop/temporal: encoding the decision: %w", err)
	}
	return &AuthorizeOutcome{Decision: b}, nil
}

// applyMode gives s the permission mode the workflow holds, when it
// differs from the one this worker last applied for it: the client may
// have changed it since (UpdateSetPermissionMode), and a worker that took
// the session over starts from the SessionInput's. A mode the session
// changed itself since (a permission update) stands until the client
// asks for another.
func (a *Activities) applyMode(ctx context.Context, s *conversation.Session, mode string) error {
	if mode == "" {
		return nil
	}
	id := activity.GetInfo(ctx).WorkflowExecution.ID
	a.mu.Lock()
	last := a.modes[id]
	a.mu.Unlock()
	if last == mode {
		return nil
	}
	if err := s.SetPermissionMode(agentloop.PermissionMode(mode)); err != nil {
		return temporal.NewNonRetryableApplicationError("agentloop/temporal: setting the permission mode", "agentloop.ModeError", err)
	}
	a.mu.Lock()
	a.modes[id] = mode
	a.mu.Unlock()
	return nil
}

// CloseSession releases the workflow's session on this worker, if it has
// one.
func (a *Activities) CloseSession(ctx context.Context, _ SessionInput) error {
	id := activity.GetInfo(ctx).WorkflowExecution.ID
	a.mu.Lock()
	s, r := a.sessions[id], a.recorders[id]
	delete(a.sessions, id)
	delete(a.modes, id)
	delete(a.recorders, id)
	a.mu.Unlock()
	closeRecorder(r)
	if s != nil {
		s.Close()
	}
	return nil
}

// closeRecorder closes a durable transcript (nil: none); a failure is
// only logged, as the entries are in the store already (Persist settles).
func closeRecorder(r *rec.Recorder) {
	if r != nil {
		_ = r.Close()
	}
}

// close releases every session of the worker.
func (a *Activities) close() {
	a.mu.Lock()
	all, recs := a.sessions, a.recorders
	a.sessions, a.recorders = map[string]*conversation.Session{}, map[string]*rec.Recorder{}
	a.mu.Unlock()
	for _, r := range recs {
		closeRecorder(r)
	}
	for _, s := range all {
		s.Release() // the session goes on elsewhere: no SessionEnd
	}
}

// heartbeat records a heartbeat every second until the returned function
// is called, so Temporal learns quickly of a worker that died.
func heartbeat(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}
