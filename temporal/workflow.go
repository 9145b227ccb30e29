package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/diag"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Names under which NewWorker registers the workflow, its activities and
// its query.
const (
	WorkflowName   = "agentloop.Session"
	activityPrefix = "agentloop."
	QueryEvents    = "agentloop.events"
	// QueryConversation answers the session's conversation as it stands
	// (a Carry with its history and model, no lines), to fork it.
	QueryConversation = "agentloop.conversation"
	// UpdatePrompt sends the next prompt of an idle session; its result
	// is the index of the stream line the prompt's messages start at.
	UpdatePrompt = "agentloop.prompt"
	// UpdateClose ends the session after its current run.
	UpdateClose = "agentloop.close"
	// UpdateInterrupt stops the run under way; the session waits for its
	// next prompt.
	UpdateInterrupt = "agentloop.interrupt"
	// UpdateSetModel changes the model of the next requests.
	UpdateSetModel = "agentloop.setModel"
	// UpdateSetPermissionMode changes the permission mode of the next
	// decisions.
	UpdateSetPermissionMode = "agentloop.setPermissionMode"
)

// Activity type names (the methods of Activities, under activityPrefix).
const (
	actDescribe  = activityPrefix + "Describe"
	actCallModel = activityPrefix + "CallModel"
	actRunTool   = activityPrefix + "RunTool"
	actAuthorize = activityPrefix + "Authorize"
	actClose     = activityPrefix + "CloseSession"
	actHook      = activityPrefix + "Hook"
	actPersist   = activityPrefix + "Persist"
)

// Events is what QueryEvents answers: the stream-json lines of the
// session's messages from the index asked for, and whether the run is
// over (Err is its infrastructure failure, "" for none).
type Events struct {
	// From is the index of Lines' first line: the one asked for, or the
	// first this run of the workflow holds when older ones went with an
	// earlier run (continue-as-new).
	From  int               `json:"from"`
	Lines []json.RawMessage `json:"lines"`
	Done  bool              `json:"done"`
	Err   string            `json:"err,omitempty"`
	// Asks are the permission requests waiting for the client's answer.
	Asks []Ask `json:"asks,omitempty"`
}

// Summary is the workflow's result.
type Summary struct {
	Runs     int    `json:"runs"`
	Messages int    `json:"messages"`
	Subtype  string `json:"subtype,omitempty"`
	// Carry is the conversation as the session ended (idle or closed),
	// without a tail: a new workflow of the same session id started with
	// it goes on from there (see ServeBackend).
	Carry *Carry `json:"carry,omitempty"`
}

// SessionWorkflow runs one prompt of a session through agentloop's loop
// (internal/engine, the loop Query runs in-process) inside the workflow:
// the loop's steps are workflow code, and its effects are activities run
// by a worker that holds the session's tools, provider and permission
// rules. Each model request is an activity (retried: a model call has no
// side effect); each tool call is one, after its permission decision (an
// activity too) is in the history. A state-changing tool's activity is
// never run again once a worker died while running it (see
// Activities.RunTool). Read-only calls of one reply run concurrently, as
// in-process, on workflow coroutines.
//
// The loop is deterministic on replay: its clock is workflow.Now, its ids
// derive from the run id, and its concurrency is the workflow's.
func SessionWorkflow(ctx workflow.Context, in SessionInput) (*Summary, error) {
	w := &wf{root: ctx, cur: ctx, in: in, runID: workflow.GetInfo(ctx).WorkflowExecution.RunID}
	// Before any handler is set: an Update that waited for this run is
	// handled as soon as its handler is.
	if in.Carry != nil {
		// The last run's lines come along: the client may not have read
		// them all when the session moved to this run.
		w.base, w.lines = in.Carry.Lines, append([]json.RawMessage(nil), in.Carry.Tail...)
	}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, w.events); err != nil {
		return nil, fmt.Errorf("agentloop/temporal: query handler: %w", err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryConversation, w.conversation); err != nil {
		return nil, fmt.Errorf("agentloop/temporal: query handler: %w", err)
	}
	w.answers = map[string]agentloop.PermissionResult{}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdatePrompt, w.prompt,
		workflow.UpdateHandlerOptions{Validator: w.validPrompt}); err != nil {
		return nil, fmt.Errorf("agentloop/temporal: update handler: %w", err)
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateClose, w.close); err != nil {
		return nil, fmt.Errorf("agentloop/temporal: update handler: %w", err)
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateInterrupt, w.interruptRun); err != nil {
		return nil, fmt.Errorf("agentloop/temporal: update handler: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSetModel, w.setModel,
		workflow.UpdateHandlerOptions{Validator: w.validModel}); err != nil {
		return nil, fmt.Errorf("agentloop/temporal: update handler: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSetPermissionMode, w.setMode,
		workflow.UpdateHandlerOptions{Validator: validMode}); err != nil {
		return nil, fmt.Errorf("agentloop/temporal: update handler: %w", err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdatePermission, w.answer,
		workflow.UpdateHandlerOptions{Validator: w.validAnswer}); err != nil {
		return nil, fmt.Errorf("agentloop/temporal: update handler: %w", err)
	}
	defer func() {
		if !w.continuing {
			w.closeSession()
		}
	}()
	var desc Description
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, describeOptions), actDescribe, w.session()).Get(ctx, &desc); err != nil {
		w.fail(fmt.Errorf("agentloop/temporal: preparing the session: %w", err))
		return nil, err
	}
	w.init = desc.Init
	if len(desc.NotCarried) > 0 && in.Carry == nil {
		w.notices = append(w.notices, "Not carried by the durable loop yet, so off in this session: "+strings.Join(desc.NotCarried, ", "))
	}
	eng, err := engine.New(w.engineConfig(desc))
	if err != nil {
		w.fail(fmt.Errorf("agentloop/temporal: %w", err))
		return nil, err
	}
	w.eng = eng
	w.partial = desc.Partial
	w.receivePartials()
	sum := &Summary{}
	runsBefore := 0
	if c := in.Carry; c != nil {
		runsBefore = c.Runs
		eng.SetHistory(c.History)
		if c.Model != "" {
			eng.SetModel(c.Model)
		}
		w.started = c.Started
		w.resumed = !c.Started
		sum.Runs = c.Runs
	}
	for prompt := in.Prompt; ; {
		if prompt != "" {
			res, err := w.runPrompt(eng, prompt)
			w.persist()
			if err != nil {
				w.fail(fmt.Errorf("agentloop/temporal: run stopped: %w", err))
				return nil, err
			}
			sum.Runs++
			if res != nil {
				sum.Subtype = res.Subtype
			}
		}
		if sum.Runs > runsBefore && w.shouldContinue(in) && !w.closing && w.queued == "" {
			// The history nears Temporal's limits: go on in a new run of
			// the same workflow id with the conversation, not the events.
			next := in
			next.Prompt = ""
			tail := w.lines[w.lastRun-w.base:]
			next.Carry = &Carry{History: eng.History(), Model: eng.Model(), Lines: w.lastRun, Tail: tail, Runs: sum.Runs, Started: w.started}
			w.continuing = true
			return nil, workflow.NewContinueAsNewError(ctx, WorkflowName, next)
		}
		next, ok := w.nextPrompt(in.IdleTimeout)
		if !ok {
			break
		}
		prompt = next
	}
	w.done = true
	sum.Messages = len(w.lines)
	sum.Carry = &Carry{History: eng.History(), Model: eng.Model(), Lines: w.base + len(w.lines), Runs: sum.Runs}
	return sum, nil
}

// errBusyText is the validator's refusal of a prompt while another runs;
// the client maps it to ErrSessionBusy.
const errBusyText = "agentloop/temporal: the session is busy with a prompt"

// runPrompt runs one prompt through the loop. An interrupt
// (UpdateInterrupt) cancels both the loop's context, so it stops between
// steps and answers the calls it leaves open, and the workflow context its
// activities run under, so a model call or a tool call under way is
// cancelled on its worker.
func (w *wf) runPrompt(eng *engine.Session, prompt string) (*message.Result, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	wctx, wcancel := workflow.WithCancel(w.root)
	w.running, w.cur = true, wctx
	w.interrupt = func() {
		cancel(errInterrupted)
		wcancel()
	}
	defer func() {
		w.running, w.cur, w.interrupt = false, w.root, nil
		cancel(nil)
		wcancel()
	}()
	w.lastRun = w.base + len(w.lines)
	if w.init != nil {
		init := *w.init
		init.UUID = w.newID()
		w.emit(&init)
	}
	for _, n := range w.notices {
		w.notice(n)
	}
	w.notices = nil
	res, err := eng.Run(ctx, []model.Content{model.TextBlock(prompt)}, w.emit)
	if err != nil && errors.Is(context.Cause(ctx), errInterrupted) {
		// The loop has given the run its result; the session goes on.
		return res, nil
	}
	return res, err
}

// errInterrupted is the cause of a run's cancellation by UpdateInterrupt.
var errInterrupted = errors.New("interrupted by the client")

// DefaultIdleTimeout is how long a session waits for its next prompt when
// SessionInput.IdleTimeout is 0; then the workflow completes.
const DefaultIdleTimeout = 10 * time.Minute

// nextPrompt waits for the next prompt (UpdatePrompt), at most idle; ok is
// false when the session ends instead: closed, idle or cancelled.
func (w *wf) nextPrompt(idle time.Duration) (string, bool) {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	got, err := workflow.AwaitWithTimeout(w.root, idle, func() bool { return w.queued != "" || w.closing })
	if err != nil || !got || w.queued == "" {
		return "", false
	}
	p := w.queued
	w.queued = ""
	return p, true
}

// prompt takes the next prompt (UpdatePrompt) and returns the index of
// the stream line its run's messages start at.
func (w *wf) prompt(_ workflow.Context, p string) (int, error) {
	w.queued = p
	return w.base + len(w.lines), nil
}

// DefaultContinueAfter is the history length (events) past which a
// session goes on in a new run (continue-as-new) between two prompts,
// well below Temporal's limits; the server's own suggestion counts too.
const DefaultContinueAfter = 10_000

// shouldContinue says whether the session should go on in a new run.
func (w *wf) shouldContinue(in SessionInput) bool {
	limit := in.ContinueAfter
	if limit <= 0 {
		limit = DefaultContinueAfter
	}
	info := workflow.GetInfo(w.root)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() > limit
}

// validPrompt accepts a prompt only while the session is idle and open.
func (w *wf) validPrompt(_ workflow.Context, p string) error {
	switch {
	case p == "":
		return fmt.Errorf("agentloop/temporal: empty prompt")
	case w.done || w.closing:
		return fmt.Errorf("agentloop/temporal: the session is closed")
	case w.running || w.queued != "":
		return errors.New(errBusyText)
	}
	return nil
}

// interruptRun stops the run under way, if any (UpdateInterrupt).
func (w *wf) interruptRun(_ workflow.Context) error {
	if w.interrupt != nil {
		w.interrupt()
	}
	return nil
}

// setModel changes the model of the session's next requests
// (UpdateSetModel); an alias ("sonnet") is resolved.
func (w *wf) setModel(_ workflow.Context, m string) error {
	w.eng.SetModel(pricing.Resolve(m))
	return nil
}

// validModel refuses an empty model, and a change before the loop exists.
func (w *wf) validModel(_ workflow.Context, m string) error {
	if strings.TrimSpace(m) == "" {
		return errors.New("agentloop/temporal: empty model")
	}
	if w.eng == nil {
		return errors.New("agentloop/temporal: the session is still starting")
	}
	return nil
}

// setMode records the permission mode the client asked for
// (UpdateSetPermissionMode); every Authorize activity carries it, so the
// worker that decides, whichever it is, uses it.
func (w *wf) setMode(_ workflow.Context, mode string) error {
	w.in.PermissionMode = mode
	return nil
}

// validMode accepts a permission mode agentloop knows.
func validMode(_ workflow.Context, mode string) error {
	if _, err := vocab.ParsePermissionMode(mode); err != nil {
		return fmt.Errorf("agentloop/temporal: %w", err)
	}
	return nil
}

// close ends the session once its run, if any, is over (UpdateClose).
func (w *wf) close(_ workflow.Context) error {
	w.closing = true
	return nil
}

// wf is one run of SessionWorkflow.
type wf struct {
	root        workflow.Context
	cur         workflow.Context // the coroutine that runs now (see fanout)
	in          SessionInput
	runID       string
	ids         int
	lines       []json.RawMessage
	done        bool
	err         string
	eng         *engine.Session
	init        *message.System                       // the session's system/init, sent before each run
	base        int                                   // stream lines before this run of the workflow (continue-as-new)
	continuing  bool                                  // this run ends in continue-as-new
	lastRun     int                                   // the stream line the last prompt's run started at
	partial     bool                                  // the loop streams the model's events
	partials    workflow.ReceiveChannel               // SignalPartial
	partialSeen int                                   // events of the current model call in the stream
	notices     []string                              // warnings for the stream, sent after the next init
	interrupt   func()                                // cancels the run under way; nil when none
	running     bool                                  // a prompt's run is under way
	queued      string                                // the next prompt, "" for none
	closing     bool                                  // UpdateClose came
	started     bool                                  // SessionStart ran (with the first prompt's hooks)
	resumed     bool                                  // the session goes on from an ended workflow's conversation
	recorded    []json.RawMessage                     // the run's messages for the transcript (transcript.go)
	asks        []Ask                                 // waiting for the client
	answers     map[string]agentloop.PermissionResult // by tool_use id
}

// emit records m for QueryEvents. It is the loop's Emit; it never stops
// the run (a client that stops reading cancels the workflow instead).
func (w *wf) emit(m message.Message) bool {
	b, err := json.Marshal(m)
	if err != nil {
		w.notice("a message could not be encoded: " + err.Error())
		return true
	}
	w.lines = append(w.lines, b)
	return true
}

// notice puts a warning for the user into the stream.
func (w *wf) notice(text string) {
	m := diag.Informational(w.in.SessionID, diag.Diagnostic{Tag: "durable", Text: text})
	m.UUID = w.newID()
	b, _ := json.Marshal(m)
	w.lines = append(w.lines, b)
}

func (w *wf) fail(err error) { w.done, w.err = true, err.Error() }

// answer records the client's answer to an Ask.
func (w *wf) answer(_ workflow.Context, a PermissionAnswer) error {
	w.answers[a.ID] = a.Result
	return nil
}

// validAnswer accepts an answer only to a request that waits for one, and
// only allow or deny.
func (w *wf) validAnswer(_ workflow.Context, a PermissionAnswer) error {
	if a.Result.Behavior != "allow" && a.Result.Behavior != "deny" {
		return fmt.Errorf("agentloop/temporal: behavior %q is not allow or deny", a.Result.Behavior)
	}
	if !slices.ContainsFunc(w.asks, func(x Ask) bool { return x.ID == a.ID }) {
		return fmt.Errorf("agentloop/temporal: no permission request %q waits for an answer", a.ID)
	}
	return nil
}

// events answers QueryEvents.
func (w *wf) events(from int) (Events, error) {
	if from < 0 || from > w.base+len(w.lines) {
		return Events{}, fmt.Errorf("agentloop/temporal: no event %d here (this run of the session holds %d to %d)",
			from, w.base, w.base+len(w.lines))
	}
	from = max(from, w.base)
	return Events{From: from, Lines: w.lines[from-w.base:], Done: w.done, Err: w.err, Asks: w.asks}, nil
}

// conversation answers QueryConversation; nil before the loop exists.
func (w *wf) conversation() (*Carry, error) {
	if w.eng == nil {
		return nil, nil
	}
	return &Carry{History: w.eng.History(), Model: w.eng.Model()}, nil
}

// newID is a message id: random-looking, the same on every replay.
func (w *wf) newID() string {
	w.ids++
	return uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s/%d", w.runID, w.ids)).String()
}

// engineConfig is the loop's configuration: desc, with every effect going
// through an activity.
func (w *wf) engineConfig(d Description) engine.Config {
	tools := make([]tool.Tool, len(d.Tools))
	for i, info := range d.Tools {
		tools[i] = &toolProxy{w: w, info: info}
	}
	var deferred *toolsearch.Catalog
	if len(d.Deferred) > 0 {
		deferred = toolsearch.NewCatalog(d.Deferred)
	}
	var cp *engine.Compaction
	if d.Compaction != nil {
		cp = &engine.Compaction{Disabled: d.Compaction.Disabled, Window: d.Compaction.Window, Instructions: d.Compaction.Instructions}
		if d.Hooks {
			w.compactionHooks(cp)
		}
	}
	return engine.Config{
		Compaction:           cp,
		Partial:              d.Partial,
		Hooks:                w.hooksIf(d.Hooks),
		Deferred:             deferred,
		OutputSchema:         d.OutputSchema,
		MaxStructuredRetries: d.MaxStructuredRetries,
		Provider:             &modelProxy{w: w},
		Model:                d.Model,
		FallbackModels:       d.FallbackModels,
		System:               d.System,
		Tools:                tools,
		MaxTurns:             d.MaxTurns,
		MaxBudgetUSD:         d.MaxBudgetUSD,
		MaxTokens:            d.MaxTokens,
		Thinking:             d.Thinking,
		Effort:               d.Effort,
		Betas:                d.Betas,
		Env:                  &tool.Env{SessionID: w.in.SessionID, Cwd: d.Cwd, State: &tool.State{}},
		OpeningContext:       d.OpeningContext,
		Authorize:            w.authorize,
		Now:                  func() time.Time { return workflow.Now(w.root) },
		NewID:                w.newID,
		Fanout:               w.fanout,
		Record:               w.recorderIf(d.Persist),
	}
}

// fanout runs a batch of read-only calls on workflow coroutines and hands
// their outcomes to done in completion order, on the loop's coroutine.
// Each coroutine makes itself w.cur before its call, so the proxies block
// the coroutine that runs them (coroutines take turns: nothing else runs
// between that assignment and the activity's Get).
func (w *wf) fanout(jobs []func() any, done func(any)) {
	root := w.cur
	results := make([]any, len(jobs))
	ch := workflow.NewChannel(root)
	for i, job := range jobs {
		workflow.Go(root, func(g workflow.Context) {
			w.cur = g
			results[i] = job()
			ch.Send(g, i)
		})
	}
	for range jobs {
		var i int
		ch.Receive(root, &i)
		w.cur = root
		done(results[i])
	}
	w.cur = root
}

// closeSession lets the worker release the session's tools (background
// shells, MCP servers, the sandbox). It runs however the workflow ends.
func (w *wf) closeSession() {
	ctx, _ := workflow.NewDisconnectedContext(w.root)
	_ = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, closeOptions), actClose, w.session()).Get(ctx, nil)
}

// Activity options: a model call is retried (the provider has retried
// transient failures already; a worker that died mid-reply is the case
// here), a read-only tool too; a state-changing tool gets a second attempt
// only to learn that the first one was cut short (Activities.RunTool).
var (
	describeOptions = workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 5}}
	modelOptions = workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Minute, HeartbeatTimeout: 5 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{errModel}}}
	readToolOptions = workflow.ActivityOptions{StartToCloseTimeout: 2 * time.Hour, HeartbeatTimeout: 5 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 3}}
	writeToolOptions = workflow.ActivityOptions{StartToCloseTimeout: 2 * time.Hour, HeartbeatTimeout: 5 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 2}}
	authorizeOptions = workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Minute, HeartbeatTimeout: 5 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 5}}
	hookOptions = workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Minute, HeartbeatTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 3}}
	closeOptions = workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}}
)

// hooksIf is the loop's hook points when the worker may have hooks.
func (w *wf) hooksIf(on bool) engine.HookPoints {
	if !on {
		return engine.HookPoints{}
	}
	return w.hookPoints()
}

// session is the SessionInput the activities get: what a worker builds the
// session from, without the conversation a continued run carries.
func (w *wf) session() SessionInput {
	in := w.in
	in.Carry = nil
	in.Prompt = ""
	return in
}
