// Package engine runs the agent loop of one session.
//
// A [Session] holds the conversation history and running totals. [Session.Run]
// takes one prompt through the loop as small steps, each in its own file:
//
//	request.go   build the request (system, tools, history, cache breakpoints)
//	stream.go    stream the reply, emitting assistant blocks and raw events
//	dispatch.go  authorise and run the tool calls, emit their results
//	account.go   add up usage and cost, check the budget
//	result.go    synthesise the result message
//
// Messages are emitted through a callback from the goroutine that called Run,
// never from a tool's goroutine, so a consumer needs no locking.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/observe"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/uuid"
)

// Config is the configuration of a session. Provider, Model and Env are
// required; everything else has a useful zero value.
type Config struct {
	Provider       model.Provider
	Model          string   // resolved model id
	FallbackModels []string // tried in order when Model is overloaded
	System         []model.Content
	Tools          []tool.Tool
	MaxTurns       int     // 0: unlimited
	MaxBudgetUSD   float64 // 0: unlimited
	MaxTokens      int     // 0: the model's maximum output
	Thinking       *model.Thinking
	Effort         string
	Betas          []string
	// TaskBudget, when positive, is sent as every request's
	// output_config.task_budget (tokens), with its beta.
	TaskBudget int
	// ContextManagement, when set, is sent as every request's
	// context_management (with its beta) for the API to edit the context
	// on its side.
	ContextManagement *model.ContextManagement
	Partial           bool // emit stream events and status messages
	// OutputSchema, when set, requires the run to end with structured
	// output matching this JSON schema, delivered through the
	// StructuredOutput tool. MaxStructuredRetries bounds the failed
	// attempts (0: DefaultStructuredRetries).
	OutputSchema         json.RawMessage
	MaxStructuredRetries int
	Env                  *tool.Env
	// OpeningContext are blocks for the model (a CLAUDE.md reminder, the
	// environment) put before the prompt in the first user message of the
	// conversation: sent once, when the history is empty, and recorded as
	// a synthetic user line of their own just before the prompt's line.
	// Later runs, and a conversation resumed with its history, do not
	// repeat them.
	OpeningContext []model.Content
	// ParentToolUseID is set for subagents, and Parent is the session
	// whose cost and per-model usage a subagent's usage also counts in.
	ParentToolUseID *string
	Parent          *Session
	// Authorize decides whether a tool call may run. Nil allows all.
	Authorize Authorizer
	// Budget, when set, is a spending cap shared with subagents; it
	// replaces MaxBudgetUSD (see Budget).
	Budget Budget
	// Hooks are the other hook points of the loop.
	Hooks HookPoints
	// Compaction, when set, compacts the history near the context window
	// and handles the /compact and /clear prompts (compaction.go).
	Compaction *Compaction
	// LocalCommand, when set, runs the local slash commands of a prompt
	// made of one text block (localcommand.go); nil makes every such
	// prompt an ordinary one (subagents).
	LocalCommand func(ctx context.Context, prompt string) (LocalOutput, bool)
	// Deferred, when it holds tools, is the session's tool search
	// catalog: those tools run when called, but are declared to the model
	// only once a ToolSearch result has loaded them (toolsearch.go).
	Deferred *toolsearch.Catalog
	// NoToolReferences keeps tool search in its text form (definitions in
	// the ToolSearch result, plain declarations, no beta) even with a
	// provider that takes tool_reference blocks: the API's betas are
	// switched off (CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS).
	NoToolReferences bool
	// Record, when set, receives every message as it enters the history
	// (the prompt, the blocks of each finished reply, tool results,
	// synthetic turns and context for the model; after a compaction, the
	// system/compact_boundary message, then the summary line, the opening
	// context and copies of the kept messages), and each run's result,
	// on the loop's goroutine and whether or not the consumer still reads
	// the stream. Read back in order, the recorded user and assistant
	// messages give the history: a host writes its transcript from them.
	Record func(message.Message)
	// Observer, when set, is told of the run's steps as spans
	// (observe.go); nil observes nothing.
	Observer observe.Observer
	// Now and NewID are the clock and id source; nil means the real ones.
	Now   func() time.Time
	NewID func() string
	// Fanout, when set, runs the read-only tool calls of a batch
	// concurrently in place of goroutines: a host whose code must be
	// deterministic (a durable workflow) runs them on its own scheduler.
	// Nil: a goroutine per call (see Fanout).
	Fanout Fanout
	// Concurrent, when set, reports whether a call of a tool that is not
	// ReadOnly only reads all the same (a Bash command that only reads
	// and prints), so that it runs concurrently with the reply's other
	// read-only calls, as the reference runs them. Nil: none does.
	Concurrent func(call *ToolCall) bool
	// Prices replace the price table's for the models they name (the
	// modelPricing setting, Options.ModelPricing); see
	// pricing.Overrides.Quote. Nil: the table.
	Prices pricing.Overrides
	// UnknownPrice, when set, is called once per model id the first time
	// a reply of a model without a price (which costs 0 and is flagged
	// costUnknown in modelUsage) is accounted in a top-level session,
	// after the session's totals are unlocked.
	UnknownPrice func(modelID string)
	// APIProvider names the API the replies come from in modelUsage's
	// provider: firstParty (the default), bedrock or vertex.
	APIProvider string
}

// Authorizer decides on one tool call. It runs on the loop's goroutine, in
// tool_use order, before any of the reply's tools start.
type Authorizer func(ctx context.Context, call *ToolCall) Decision

// ToolCall is a call the model asked for, as seen by the Authorizer.
type ToolCall struct {
	ID    string
	Name  string
	Input []byte // validated, defaults applied
	Tool  tool.Tool
	// Alone is set when this is the only tool call of its reply, the one
	// case where the call may be deferred (Decision.Defer).
	Alone bool
}

// Decision is the outcome of authorising a call.
type Decision struct {
	Allow bool
	// Message is what the model is told when the call is denied.
	Message string
	// Source (config or hook) and ReasonType (mode, rule, hook, …) are
	// reported in tool_result_meta.
	Source, ReasonType string
	// Input, when set on an allowed call, replaces the call's input.
	Input []byte
	// Interrupt stops the run after a denial.
	Interrupt bool
	// Quiet records a denial in the result's permission_denials without a
	// system/permission_denied message, as for denials by hooks.
	Quiet bool
	// Context is text for the model, sent after the tool results.
	Context []string
	// Halt ends the run after this reply's tools.
	Halt *Halt
	// Defer, for a call that is Alone, leaves the call pending: it does
	// not run, the run ends with stop_reason and terminal_reason
	// tool_deferred and the result's deferred_tool_use, and the history
	// keeps the tool_use without a result. The next Run first authorises
	// the pending call again (see resumeDeferred). On a call that is not
	// Alone, Defer is a denial with Message.
	Defer bool
}

// ErrStopped is returned by Run when the consumer stopped reading.
var ErrStopped = errors.New("consumer stopped reading")

// Emit receives each message of a run; returning false stops the run.
type Emit func(message.Message) bool

// Session is one conversation. It is not safe for concurrent use: run one
// prompt at a time.
type Session struct {
	// mu guards the settings a host may change while a run streams:
	// cfg.Model, cfg.FallbackModels, cfg.Thinking, cfg.Effort.
	mu      sync.Mutex
	cfg     Config
	tools   []toolEntry // in declaration order; replaced, never changed in place (toolset.go)
	history []model.Message
	// hasSealed: the history has held a sealed block (seal.go).
	hasSealed bool
	totals    totals
	current   *run // the run in progress, if any (loop goroutine only)
	// sent is the request of the latest model call of a run (see
	// SentRequest); it never changes once stored.
	sent  atomic.Pointer[model.Request]
	notes notes
	// pendingInterrupted: the history's pending calls were cut off by a
	// crash (SetHistoryInterrupted), not deferred.
	pendingInterrupted bool
	// resumedInterrupted: SetHistory was given a history that ends with
	// an interrupt's marker (interrupt.go, answerMarker).
	resumedInterrupted bool
	// ctxMark is the context size the API last reported (compaction.go).
	ctxMark contextMark
	// heldContext is what PromptSubmit added for a built-in command's
	// prompt ("/compact", "/clear"), which sends nothing to the model:
	// it goes with the next prompt that does.
	heldContext []model.Content
	// changes are tool set changes waiting for the next request
	// (toolset.go).
	changes toolChanges
	// budget is where the budget counts from (streaming.go).
	budget budgetScope
	// meta is the request metadata of the current session id (request.go).
	meta atomic.Pointer[sessionMeta]
	// sys is the system blocks requests share (request.go).
	sys atomic.Pointer[systemCache]
	// toolDefs is what declaredTools returned last, shared by the
	// requests while it stays the same.
	toolDefs atomic.Pointer[[]model.ToolDef]
	// memo is where the provider keeps what the loop's last request can
	// save the next (its encoded history).
	memo model.Memo
}

// toolEntry is one of the session's tools: the name its Info gave when
// it joined, the tool and its compiled input schema. The rest of its Info
// is asked for when needed (Tool.Info is cheap and stable while a run
// uses the tool), so that an idle session keeps 40 bytes per tool.
type toolEntry struct {
	name   string
	tool   tool.Tool
	schema *tool.Schema
}

// info is the tool's Info.
func (e *toolEntry) info() tool.Info { return e.tool.Info() }

// lookup returns the session's tool called name. The entry stays valid
// after a tool change (the table is replaced, not changed).
func (s *Session) lookup(name string) (*toolEntry, bool) {
	for i := range s.tools {
		if s.tools[i].name == name {
			return &s.tools[i], true
		}
	}
	return nil, false
}

// Check reports the error New would return for cfg, without keeping a
// session: a host that makes the session later (at its first use) checks
// its configuration up front. New(cfg) then fails only if a tool's Info
// changed in between.
func Check(cfg Config) error {
	_, err := New(cfg)
	return err
}

// New checks the configuration and returns a session with an empty history.
func New(cfg Config) (*Session, error) {
	if cfg.Provider == nil {
		return nil, errors.New("engine: no model provider")
	}
	if cfg.Env == nil {
		return nil, errors.New("engine: no tool environment")
	}
	if cfg.Model == "" {
		return nil, errors.New("engine: no model")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = uuid.NewString
	}
	tools := cfg.Tools
	s := &Session{cfg: cfg}
	if cfg.OutputSchema != nil {
		if err := checkOutputSchema(cfg.OutputSchema); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
		tools = append(append([]tool.Tool(nil), tools...), structuredTool(cfg.OutputSchema))
	}
	s.tools = make([]toolEntry, 0, len(tools))
	for _, t := range tools {
		if t == nil {
			return nil, errors.New("engine: nil tool")
		}
		if err := tool.Check(t); err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
		info := t.Info()
		if info.Name == "" {
			return nil, errors.New("engine: a tool has no name")
		}
		if _, dup := s.lookup(info.Name); dup {
			return nil, fmt.Errorf("engine: two tools are named %q", info.Name)
		}
		schema, err := tool.CompileSchema(info.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("engine: tool %q: %w", info.Name, err)
		}
		s.tools = append(s.tools, toolEntry{name: info.Name, tool: t, schema: schema})
	}
	// The table holds them: Config gives them back from it, so that an
	// idle session does not keep the list twice.
	s.cfg.Tools = nil
	return s, nil
}

// ToolNames returns the names of the session's tools, in declaration order.
func (s *Session) ToolNames() []string {
	out := make([]string, len(s.tools))
	for i := range s.tools {
		out[i] = s.tools[i].name
	}
	return out
}

// run is the state of one Run call.
type run struct {
	s        *Session
	ctx      context.Context
	emit     Emit
	start    time.Time
	numTurns int // 1 + user lines emitted after the prompt
	rounds   int // model replies that asked for tools
	usage    model.Usage
	apiTime  time.Duration
	denials  []message.PermissionDenial
	last     *model.Response
	stopped  bool
	// structured tracks structured output when the session requires it.
	structured structuredState
	// halt is set by a hook that stopped the run; stopHooks counts the
	// stops in a row that a hook turned into another turn.
	halt      *Halt
	stopHooks int
	// spentAtStart is the session cost when Run began; the budget counts
	// only what this run spends.
	spentAtStart float64
	// open are the calls of the last reply while their results come in;
	// shown are the assistant messages of the reply being streamed.
	open  *openCalls
	shown []*message.Assistant
	// cutEvents are the stream events that close a reply an interrupt
	// cut short, written after the marker (closingEvents).
	cutEvents []*message.StreamEvent
	// deferred is the call an authoriser deferred; the run ends with it
	// pending (closeTurn leaves it open).
	deferred *message.DeferredToolUse
	// compactSkipped: a PreCompact hook blocked automatic compaction in
	// this run.
	compactSkipped bool
	// checked remembers the schema checks of the last reply's tool calls
	// (see validate), so that each input is checked once, not once when
	// its block is shown, again when the reply ends and again before the
	// call runs.
	checked []checkedInput
	// overflowRetried: the request being made was refused as too long
	// once already and sent again after a compaction (overflow.go);
	// overflows counts those compactions in this run and sinceOverflow
	// the replies since the last one.
	overflowRetried bool
	overflows       int
	sinceOverflow   int
	// afterTools: the last step committed a reply's tool results, so the
	// host's queued messages may fold in before the next request;
	// folded are the ids of those folded since the last reply (fold.go).
	afterTools bool
	folded     []string
	obs        *runObs // open spans; nil without Config.Observer (observe.go)
}

func (r *run) send(m message.Message) bool {
	r.drain()
	if r.stopped {
		return false
	}
	if !r.emit(m) {
		r.stopped = true
	}
	return !r.stopped
}

// Run takes one prompt through the loop, emitting every message, and returns
// the result (also emitted last). The error is non-nil when the run could not
// finish: the context was cancelled (a result with error_during_execution is
// emitted first) or the consumer stopped reading (ErrStopped).
//
// Whichever way it ends, Run leaves a history the API accepts: calls of the
// last reply that did not run get an is_error result (see closeTurn), and
// Config.Record has seen exactly what the history holds, in its order.
func (s *Session) Run(ctx context.Context, prompt []model.Content, emit Emit) (*message.Result, error) {
	r := &run{s: s, ctx: ctx, emit: emit, start: s.cfg.Now(), numTurns: 1, spentAtStart: s.startBudget()}
	s.current = r
	s.notes.mu.Lock()
	s.notes.q = nil
	s.notes.mu.Unlock()
	defer func() { s.current = nil }()
	r.observeStart(prompt)
	e := r.loop(prompt)
	defer r.observeEnd(&e)
	return r.end(&e)
}

// end closes the run that ended with e: the turn closed, the result
// recorded and emitted. Not inlined, so that Run's frame, under every
// turn of the run, stays small (see streamOnce).
//
//go:noinline
func (r *run) end(e *ending) (*message.Result, error) {
	if e.unrun == "" {
		e.unrun = Interrupted
	}
	if e.interrupted && !r.stopped {
		r.closeInterrupted()
		if e.res != nil {
			e.res.NumTurns = r.numTurns
		}
	} else {
		r.closeTurn(e.unrun)
	}
	if e.res == nil {
		// The consumer is gone; the record still gets the run's cost.
		res := r.base(message.ResultErrorDuringExecution, true)
		res.Errors = []string{"The run stopped: " + ErrStopped.Error()}
		res.TerminalReason = message.TerminalAborted
		res.StopReason = nil
		r.record(res)
		return nil, e.err
	}
	r.record(e.res)
	if e.silent {
		return e.res, e.err
	}
	if !r.send(e.res) && e.err == nil {
		return e.res, ErrStopped
	}
	return e.res, e.err
}

// loop runs the turns of one prompt until the run ends. A turn is
// prepare → callModel → afterReply → afterFinalReply or afterToolCalls,
// each step deciding whether the turn goes on, the next one starts, or
// the run ends; the conditions that end a run between steps are the
// lists of stop.go.
func (r *run) loop(promptIn []model.Content) ending {
	s := r.s
	if e, done := r.resumeDeferred(); done {
		return e
	}
	r.answerMarker()
	prompt, context, res := r.submitPrompt(promptIn)
	if res != nil {
		return finish(res)
	}
	if e, done := r.manualCommand(prompt); done {
		s.heldContext = append(s.heldContext, context...)
		return e
	}
	if e, done := r.localCommand(prompt); done {
		s.heldContext = append(s.heldContext, context...)
		return e
	}
	if len(s.heldContext) > 0 {
		context, s.heldContext = append(s.heldContext, context...), nil
	}
	r.commitPrompt(prompt, context)
	for {
		r.turnEnd()
		if e, done := r.prepare(); done {
			return e
		}
		resp, shown, err := r.callModel()
		next, e := r.afterReply(resp, shown, err)
		if next == proceed {
			if r.open == nil {
				next, e = r.afterFinalReply(resp)
			} else {
				next, e = r.afterToolCalls(resp)
			}
		}
		if next == end {
			return e
		}
	}
}

// step is what a step of a turn decides: go on to the turn's next step,
// start the next turn, or end the run.
type step int

const (
	proceed step = iota
	nextTurn
	end
)

// prepare readies the next model call: the rules that end a run before a
// call (beforeCallRules), automatic compaction and the prompts queued
// meanwhile, each of which may end the run instead.
func (r *run) prepare() (ending, bool) {
	if e, stop := r.firstStop(beforeCallRules); stop {
		return e, true
	}
	if e, done := r.autoCompact(); done {
		return e, true
	}
	if e, done := r.foldQueued(); done {
		return e, true
	}
	r.turnBegin()
	return ending{}, false
}

// afterReply takes the outcome of a model call: a failure ends the run
// or, for a context overflow it could recover from, starts the turn
// again; a reply goes into the history and counts against the budget.
func (r *run) afterReply(resp *model.Response, shown []*message.Assistant, err error) (step, ending) {
	s, ctx := r.s, r.ctx
	if r.stopped {
		return end, ending{err: ErrStopped}
	}
	if err != nil {
		if ctx.Err() != nil {
			r.commitReply(shown) // as far as it streamed
			return end, r.aborted(ctx.Err())
		}
		if e, done, retry := r.recoverOverflow(err); done {
			return end, e
		} else if retry {
			return nextTurn, ending{}
		}
		return end, r.apiFailure(err)
	}
	r.overflowRetried = false
	r.sinceOverflow++
	r.last = resp
	r.commitReply(shown)
	s.noteContext(resp.Usage)
	if r.overBudget() {
		return end, unrunBecause(r.errorResult(message.ResultErrorMaxBudget, message.TerminalBudgetExhausted,
			fmt.Sprintf("Reached maximum budget ($%s)", formatUSD(r.budgetCap())), false), budgetUnrun(r.budgetCap()))
	}
	r.usage = r.usage.Add(resp.Usage)
	return proceed, ending{}
}

// afterFinalReply handles a reply without tool calls: one cut off at the
// output limit is continued, a structured-output run insists on its
// output, Stop hooks may ask for more; otherwise the run succeeds.
func (r *run) afterFinalReply(resp *model.Response) (step, ending) {
	if resp.StopReason == "max_tokens" {
		if !r.continueAfterMaxTokens() {
			return end, ending{err: ErrStopped}
		}
		return nextTurn, ending{}
	}
	if r.s.cfg.OutputSchema != nil {
		cont, res := r.enforceStructured()
		switch {
		case res != nil:
			return end, finish(res)
		case !cont:
			return end, ending{err: ErrStopped}
		}
		return nextTurn, ending{}
	}
	if cont, res := r.beforeStop(); res != nil {
		return end, finish(res)
	} else if cont {
		return nextTurn, ending{}
	} else if r.stopped {
		return end, ending{err: ErrStopped}
	} else if err := r.ctx.Err(); err != nil {
		return end, r.aborted(err) // interrupted while the Stop hooks ran
	}
	return end, finish(r.successResult())
}

// afterToolCalls runs a reply's tool calls, then checks afterToolsRules.
func (r *run) afterToolCalls(resp *model.Response) (step, ending) {
	s := r.s
	r.rounds++
	if !r.dispatch(resp) {
		if r.ctx.Err() != nil {
			return end, r.abortedTools(r.ctx.Err())
		}
		return end, ending{err: ErrStopped}
	}
	if s.cfg.OutputSchema != nil && r.deferred == nil && r.halt == nil {
		r.noteStructured(resp, s.history[len(s.history)-1].Content)
	}
	if e, stop := r.firstStop(afterToolsRules); stop {
		return end, e
	}
	r.afterTools = true
	return nextTurn, ending{}
}

// continueAfterMaxTokens asks the model to go on after a reply that hit the
// output limit, as a synthetic user turn.
func (r *run) continueAfterMaxTokens() bool {
	return r.syntheticTurn("Your reply was cut off at the output token limit. Continue exactly where it stopped, without repeating anything; break the remaining work into smaller steps.")
}

// syntheticTurn adds a user turn the loop wrote itself (a continuation, a
// reminder, hook feedback), emits it marked isSynthetic, and counts it as a
// turn. It returns false when the consumer stopped reading.
func (r *run) syntheticTurn(text string) bool {
	blocks := []model.Content{model.TextBlock(text)}
	m := r.userMessage(blocks, true)
	r.commitUser(blocks, m)
	r.numTurns++
	return r.send(m)
}

func (r *run) timestamp() string {
	return r.s.cfg.Now().UTC().Format("2006-01-02T15:04:05.000Z")
}

// SetModel changes the model for the session's next request. It is safe to
// call while a run streams.
func (s *Session) SetModel(m string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Model = m
}

// Config returns the configuration the session was built from, with the
// model, thinking and effort as they are now (SetModel, SetThinking,
// SetEffort), and the tools as they are now: those of the configuration
// in their order, with the tool set changes applied (toolset.go); never
// the structured-output tool the session adds itself. Safe to call while
// a run streams.
func (s *Session) Config() Config {
	s.mu.Lock()
	c := s.cfg
	tools := s.tools // replaced under mu, never changed in place
	s.mu.Unlock()
	c.Tools = make([]tool.Tool, 0, len(tools))
	for i := range tools {
		if tools[i].name == StructuredOutputTool && c.OutputSchema != nil {
			continue
		}
		c.Tools = append(c.Tools, tools[i].tool)
	}
	return c
}

// Model returns the session's current model.
func (s *Session) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Model
}

// SetThinking changes the thinking configuration from the next request on;
// nil restores the model's default. Safe to call while a run streams.
func (s *Session) SetThinking(t *model.Thinking) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Thinking = t
}

// SetEffort changes the effort from the next request on. Safe to call while
// a run streams.
func (s *Session) SetEffort(e string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Effort = e
}

// settings returns the mutable settings for one request.
func (s *Session) settings() (models []string, thinking *model.Thinking, effort string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{s.cfg.Model}, s.cfg.FallbackModels...), s.cfg.Thinking, s.cfg.Effort
}

type emitterKey struct{}

// Emitter returns the function a tool uses to put messages into the stream
// of the run that called it (a subagent's progress, say), or nil when the
// tool was not called by the loop. The function is safe to call from the
// tool's goroutine; the messages appear before the tool's result.
func Emitter(ctx context.Context) func(message.Message) {
	f, _ := ctx.Value(emitterKey{}).(func(message.Message))
	return f
}

// SessionID returns the session's id.
func (s *Session) SessionID() string { return s.cfg.Env.SessionID }
