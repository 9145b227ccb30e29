package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/observe"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/uuid"
)

// Callback is a hook written in Go. It gets the event's input (one of the
// *Input types, as a value) and, for tool events, the tool call's id. Its
// context is cancelled when the hook's timeout passes or the dispatch is
// cancelled; a callback that ignores it is abandoned at that point (its
// output discarded) and left to return on its own.
//
// An error, or a panic, is reported as a non-blocking hook error: the
// event goes on as if the callback had returned nothing. Callbacks of one
// event run concurrently with each other and with command hooks.
type Callback func(ctx context.Context, in Input, toolUseID string) (Output, error)

// Matcher registers callbacks for the events whose target matches.
type Matcher struct {
	// Matcher selects by the event's target: the tool name for tool
	// events and PermissionRequest, source for SessionStart, reason for
	// SessionEnd, trigger for PreCompact, notification_type for
	// Notification, agent type for SubagentStart and SubagentStop, the
	// command name for UserPromptExpansion.
	// UserPromptSubmit and Stop hooks always run. Empty or "*" matches
	// everything; a plain name or a "|"- or ","-separated list of names
	// matches exactly (MCP tools are named mcp__<server>__<tool>);
	// anything else is an unanchored RE2 regular expression.
	Matcher string
	Hooks   []Callback
	// Timeout is per callback; 0 means the event's default
	// (DefaultTimeout, UserPromptSubmitTimeout, SessionEndBudget).
	Timeout time.Duration
}

// Config configures a Dispatcher.
type Config struct {
	// Callbacks are the Go hooks, by event.
	Callbacks map[Event][]Matcher
	// Commands are the hooks of settings files (settings.Settings.Hooks),
	// by event name. Command, http and prompt hooks run; agent and
	// mcp_tool hooks, and entries that use a field agentloop does not
	// honour (see New), are skipped with a warning.
	Commands map[string][]settings.HookMatcher
	// Cwd is the session's working directory: the command hooks' working
	// directory and the inputs' cwd. Empty means the process's.
	Cwd string
	// ProjectDir is CLAUDE_PROJECT_DIR for command hooks; empty means Cwd.
	ProjectDir string
	// SessionID and TranscriptPath fill the inputs' fields when the
	// caller leaves them empty.
	SessionID      string
	TranscriptPath string
	// Env is the environment of command hooks; nil means the process's.
	// CLAUDE_PROJECT_DIR is always added.
	Env []string
	// Observer, if set, is told when each hook starts and finishes (the
	// system/hook_started and system/hook_response lines): all starts
	// first, in registration order, then each response as its hook
	// finishes. It is called on the goroutine that called the event
	// method, and never concurrently for one Dispatcher (calls from
	// concurrent event methods are serialised). The event method waits
	// for it, so it should not block for long.
	Observer func(Notice)
	// Spans, if set, gets a span (observe.KindHook) for each dispatch of
	// an event that runs hooks, under the caller's context (observe.go).
	Spans observe.Observer
	// OverflowDir receives the full text of hook output longer than
	// MaxOutputChars (created, 0700, when first needed); empty means
	// os.TempDir().
	OverflowDir string
	// Prompt asks a model for prompt hooks: model is the hook's model
	// field, or DefaultPromptModel; system and user are the two texts of
	// a one-turn request, and the reply's text is returned. Nil: prompt
	// hooks are skipped with a warning.
	Prompt PromptFunc
	// Report, if set, receives every hook error, one line each ("<hook
	// name> hook error: …"): those of Common.Errors as an event's results
	// are merged, and those of async hooks, which end after their event's
	// method returned and have no result to go in. It may be called
	// concurrently.
	Report func(text string)
	// ReportError, if set, is called instead of Report, with the same
	// text and the error behind it when a Go callback returned one or
	// panicked (nil for every other failure: a command, http or prompt
	// hook, a timeout, invalid output), so the caller can tell failures
	// apart with errors.Is or errors.As rather than by their text. It may
	// be called concurrently.
	ReportError func(text string, cause error)
	// SystemMessage, if set, receives each hook's systemMessage (a
	// warning for the user, never shown to the model) as the event's
	// results are merged. It may be called concurrently.
	SystemMessage func(text string)
	// Start, if set, starts each command hook's process instead of
	// procguard.Start; origin is the settings source of the hook's entry
	// ("" for plugin hooks and hooks without one). It must start cmd
	// with procguard.Start's guarantees or stronger (a sandbox), or
	// return an error, which fails the hook like a command that cannot
	// start (reported; a blocking event is not blocked by it). It may be
	// called concurrently.
	Start func(cmd *exec.Cmd, origin settings.Source) error
	// Debug, if set, receives notes on how hooks were run that are
	// neither errors nor warnings: an allow dropped from a hook whose
	// "if" condition could not be judged, a condition that could not be
	// tested. It may be called concurrently.
	Debug func(text string)
	// Policy holds the settings keys that restrict http hooks, as
	// settings.Settings.Extra carries them (key → its JSON value). The
	// caller passes the values of the managed (policy) settings here,
	// which an administrator controls; New reads two keys and ignores
	// the rest, and an absent key restricts nothing:
	//
	//   - allowedHttpHookUrls: a list of URL patterns, "*" matching any
	//     run of characters. An http hook whose url matches none of them
	//     is left out, with a warning; an empty list leaves out every
	//     http hook.
	//   - httpHookAllowedEnvVars: a list of variable names. Any http
	//     hook's headers may expand only the variables in both this list
	//     and the hook's own allowedEnvVars.
	//
	// A value that is not a list of strings restricts as an empty list
	// would (no http hook runs; no variable expands), with a warning.
	Policy map[string]json.RawMessage
}

// MaxOutputChars caps each hook text that reaches the model or the user
// (additional context, system messages, reasons, plain stdout). Longer
// text is saved to a file and replaced by a preview and the file's path.
const MaxOutputChars = 10000

// previewChars is how much of an over-long text is kept.
const previewChars = 8000

// Dispatcher runs the hooks of a session. It is immutable after New and
// safe for concurrent use.
//
// Command hooks run with the privileges of the process, in the session's
// working directory: they come from settings files, which are trusted
// configuration.
type Dispatcher struct {
	cfg      Config
	hooks    map[Event][]*hook
	policy   httpPolicy
	warnings []string
	obsMu    sync.Mutex
}

// hook is one registered callback or settings hook.
type hook struct {
	match    pattern
	timeout  time.Duration // 0: the event's default
	callback Callback
	kind     string          // "callback", or the settings hook's type
	command  string          // command hooks
	entry    settings.Hook   // settings hooks
	source   string          // "callback N" or the settings file, for messages
	once     *atomic.Bool    // once hooks: set when it has run
	async    bool            // runs in the background, without effect
	failStop bool            // onFailure "block": a failure blocks
	cond     *condition      // the "if" condition; nil for none
	origin   settings.Source // the settings source of a settings hook
	envVars  []string        // http hooks: the variables headers may expand
}

// key identifies a settings hook for de-duplication: the same command,
// url or prompt registered twice for an event, with the same "if"
// condition, runs once.
func (h *hook) key() string {
	switch h.kind {
	case "http":
		return "http\x00" + h.entry.URL + "\x00" + h.entry.If
	case "prompt":
		return "prompt\x00" + h.entry.Model + "\x00" + h.entry.Prompt + "\x00" + h.entry.If
	}
	return "command\x00" + h.command + "\x00" + h.entry.If
}

// New builds a Dispatcher. It fails if a callback's matcher does not
// compile or a callback is nil. A settings hook that cannot run (a
// matcher that does not compile, an agent or mcp_tool hook, a field
// agentloop does not honour) is left out and noted in Warnings, as are
// fields that are ignored. The decisions, field by field:
//
//   - timeout, command, prompt, model, url, headers, allowedEnvVars: honoured
//     (url and allowedEnvVars within Config.Policy's limits).
//   - if (command, http, prompt): a permission rule, Tool or
//     Tool(content), that the tool call must match for the hook to run,
//     for PreToolUse, PostToolUse, PostToolUseFailure and
//     PermissionRequest; a hook with "if" on any other event never runs
//     and is left out with a warning. The tool name must be the call's
//     (MCP tools by their full name); without content every call of the
//     tool matches; with content the permission checker's matcher for
//     the tool decides as it would for a deny rule of that text: Bash
//     patterns ("git *", "npm run test:*") against every part of a
//     compound command, file-tool path patterns against the file path,
//     WebFetch "domain:…" against the URL's host. A call the checker
//     cannot judge runs the hook, but only a deny or block from it
//     counts (see condition.go).
//   - onFailure (command, http): "block" makes a failure (an error, a
//     timeout, invalid output) block the event as exit code 2 would, except
//     for Stop and SubagentStop; "continue" is the default.
//   - once (command): the hook runs at most once per Dispatcher.
//   - async (command): the hook runs in the background; its output has no
//     effect and its failures go to Config.Report.
//   - statusMessage: spinner text; agentloop has no spinner, so it has
//     no effect (and needs none).
//   - args, shell other than "bash": not supported; the hook is
//     skipped, with a warning, rather than run in a way it was not meant
//     to run.
//   - asyncRewake (command), continueOnBlock (prompt): not supported; the
//     hook runs without them, with a warning.
//   - any other field: ignored, with a warning naming it.
//   - agent and mcp_tool hooks: not supported; skipped with a warning.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Cwd == "" {
		if wd, err := os.Getwd(); err == nil {
			cfg.Cwd = wd
		}
	}
	if cfg.ProjectDir == "" {
		cfg.ProjectDir = cfg.Cwd
	}
	if cfg.OverflowDir == "" {
		cfg.OverflowDir = os.TempDir()
	}
	d := &Dispatcher{cfg: cfg}                    // hooks is made by the first hook: most sessions have none
	d.policy, d.warnings = readPolicy(cfg.Policy) // policy.go
	n := 0
	for _, ev := range Events {
		for i, m := range cfg.Callbacks[ev] {
			p, err := compilePattern(m.Matcher)
			if err != nil {
				return nil, fmt.Errorf("hooks: %s matcher %d: %w", ev, i, err)
			}
			for _, cb := range m.Hooks {
				if cb == nil {
					return nil, fmt.Errorf("hooks: %s matcher %d: nil callback", ev, i)
				}
				if d.hooks == nil {
					d.hooks = map[Event][]*hook{}
				}
				d.hooks[ev] = append(d.hooks[ev], &hook{match: p, timeout: m.Timeout, callback: cb,
					kind: "callback", source: fmt.Sprintf("callback %d", n)})
				n++
			}
		}
	}
	for ev := range cfg.Callbacks {
		if !known(ev) {
			return nil, fmt.Errorf("hooks: callbacks for %q: not an event this package dispatches", ev)
		}
	}
	for _, ev := range Events {
		for _, m := range cfg.Commands[string(ev)] {
			from := m.File
			if from == "" {
				from = string(m.Source)
			}
			p, err := compilePattern(m.Matcher)
			if err != nil {
				d.warnings = append(d.warnings, fmt.Sprintf("%s: hooks.%s: %v; its hooks never run", from, ev, err))
				continue
			}
			for _, h := range m.Hooks {
				hk, warns := d.settingsHook(ev, h)
				for _, w := range warns {
					d.warnings = append(d.warnings, fmt.Sprintf("%s: hooks.%s: %s", from, ev, w))
				}
				if hk != nil {
					hk.match, hk.source, hk.origin = p, from, m.Source
					if d.hooks == nil {
						d.hooks = map[Event][]*hook{}
					}
					d.hooks[ev] = append(d.hooks[ev], hk)
				}
			}
		}
	}
	for name := range cfg.Commands {
		// An event settings does not know was reported as unknown when
		// the file was read; one it knows but this dispatcher never
		// dispatches is reported here.
		if !known(Event(name)) && slices.Contains(settings.HookEvents, name) {
			d.warnings = append(d.warnings, fmt.Sprintf("hooks.%s: event not dispatched; its hooks never run", name))
		}
	}
	return d, nil
}

func known(ev Event) bool {
	for _, e := range Events {
		if e == ev {
			return true
		}
	}
	return false
}

// Warnings are the settings hooks New left out, and why.
func (d *Dispatcher) Warnings() []string { return append([]string(nil), d.warnings...) }

// Matches reports whether any hook would run for ev with this target (a
// tool name, a SessionStart source, …), so a caller can skip building an
// input nobody reads.
func (d *Dispatcher) Matches(ev Event, target string) bool {
	if d == nil {
		return false
	}
	for _, h := range d.hooks[ev] {
		if !matchable(ev) || h.match.match(target) {
			return true
		}
	}
	return false
}

// Outcome is how a hook run ended, as system/hook_response reports it.
type Outcome string

// The outcomes.
const (
	Success   Outcome = "success"
	Failed    Outcome = "error"     // exit code other than 0, invalid output, callback error or panic
	Cancelled Outcome = "cancelled" // timed out or the dispatch was cancelled
)

// Notice reports a hook starting (Subtype "hook_started") or finishing
// ("hook_response"). The output fields are set for hook_response only.
type Notice struct {
	Subtype   string
	HookID    string // a UUID shared by the two notices of one run
	HookName  string // "PreToolUse:Bash", "Stop"
	HookEvent Event
	// Output is stdout and stderr interleaved as written, Stdout and
	// Stderr each alone. For a callback, Stdout and Output are its
	// output as JSON and Stderr its error.
	Output, Stdout, Stderr string
	// ExitCode is the command's exit status (128+N when killed by
	// signal N, -1 when it could not start); for a callback 0, or 1 when
	// it failed; for an http hook 0 for a 2xx answer, else the HTTP
	// status (-1 without an answer); for a prompt hook 0 for ok, 2 for
	// not ok, 1 when it failed.
	ExitCode int
	Outcome  Outcome
}

// Fields are the notice's fields as they appear on its system line,
// besides type, subtype, uuid and session_id.
func (n Notice) Fields() map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	put := func(k string, v any) {
		b, _ := json.Marshal(v)
		m[k] = b
	}
	put("hook_id", n.HookID)
	put("hook_name", n.HookName)
	put("hook_event", n.HookEvent)
	if n.Subtype == "hook_response" {
		put("output", n.Output)
		put("stdout", n.Stdout)
		put("stderr", n.Stderr)
		put("exit_code", n.ExitCode)
		put("outcome", n.Outcome)
	}
	return m
}

func (d *Dispatcher) notify(n Notice) {
	if d.cfg.Observer == nil {
		return
	}
	d.obsMu.Lock()
	defer d.obsMu.Unlock()
	d.cfg.Observer(n)
}

// run is the outcome of one hook.
type run struct {
	h        *hook
	ev       Event
	name     string // "PreToolUse:Bash"
	denyOnly bool   // the "if" condition could not be judged: only a deny or block counts

	out    Output
	hasOut bool   // out is a valid output with effect
	plain  string // stdout of an exit-0 command that is not JSON

	blocked bool   // exit code 2
	stderr  string // stderr of a blocked command

	failure  string // a non-blocking error, for Errors
	cause    error  // the error a callback returned, when that is the failure
	timedOut bool
	canceled bool
}

// label names the hook in messages: "[command]" as the reference does,
// "[url]" for an http hook, "[prompt: …]" for a prompt hook, or
// "callback N".
func (r *run) label() string { return r.h.label() }

// label is the hook's name in messages (see run.label).
func (h *hook) label() string {
	switch h.kind {
	case "callback":
		return h.source
	case "http":
		return "[" + h.entry.URL + "]"
	case "prompt":
		return "[prompt: " + clip(strings.Join(strings.Fields(h.entry.Prompt), " "), 60) + "]"
	}
	return "[" + h.command + "]"
}

// blockText is what a blocked (exit 2) hook tells the model.
func (r *run) blockText() string {
	msg := r.stderr
	if strings.TrimSpace(msg) == "" {
		msg = "No stderr output"
	}
	return r.label() + ": " + msg
}

// lateText is what a hook that did not finish tells.
func (r *run) lateText() string {
	if r.canceled {
		return r.label() + ": cancelled"
	}
	return fmt.Sprintf("%s: did not respond within %gs", r.label(), r.timeout().Seconds())
}

func (r *run) timeout() time.Duration {
	if r.h.timeout > 0 {
		return r.h.timeout
	}
	if r.h.kind == "prompt" {
		return min(PromptTimeout, defaultTimeout(r.ev))
	}
	return defaultTimeout(r.ev)
}

// dispatch runs the hooks of in's event that match, concurrently, and
// returns their runs in registration order: callbacks (in Config order),
// then settings hooks (in settings order). A command, url or prompt that
// appears twice among the matching hooks runs once; a once hook that ran
// before is left out; async hooks are started in the background and not
// returned.
func (d *Dispatcher) dispatch(ctx context.Context, in Input) []*run {
	if d == nil {
		return nil
	}
	ev := in.EventName()
	target := in.target()
	var selected, background []*hook
	seen := map[string]bool{}
	denyOnly := map[*hook]bool{}
	for _, h := range d.hooks[ev] {
		if matchable(ev) && !h.match.match(target) {
			continue
		}
		ok, only := d.gate(h, in) // the "if" condition (condition.go)
		if !ok {
			continue
		}
		if only {
			denyOnly[h] = true
		}
		if h.callback == nil {
			if seen[h.key()] {
				continue
			}
			seen[h.key()] = true
		}
		if h.once != nil && !h.once.CompareAndSwap(false, true) {
			continue
		}
		if h.async {
			background = append(background, h)
			continue
		}
		selected = append(selected, h)
	}
	for _, h := range background {
		d.runAsync(ctx, h, in)
	}
	if len(selected) == 0 {
		return nil
	}
	name := string(ev)
	if matchable(ev) && target != "" {
		name += ":" + target
	}
	if ev == SessionEnd {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, SessionEndBudget)
		defer cancel()
	}
	ctx, span := d.observe(ctx, ev, name, len(selected))
	defer span.end()
	stdin, merr := json.Marshal(in)
	runs := make([]*run, len(selected))
	ids := make([]string, len(selected))
	for i, h := range selected {
		runs[i] = &run{h: h, ev: ev, name: name, denyOnly: denyOnly[h]}
		ids[i] = uuid.NewString()
		d.notify(Notice{Subtype: "hook_started", HookID: ids[i], HookName: name, HookEvent: ev})
	}
	done := make(chan Notice, len(runs))
	for i, r := range runs {
		go func() {
			n := d.execute(ctx, r, in, stdin, merr)
			n.Subtype, n.HookID, n.HookName, n.HookEvent = "hook_response", ids[i], name, ev
			done <- n
		}()
	}
	// Notices are delivered here, on the caller's goroutine, as hooks
	// finish; receiving all of them also means every run is complete.
	for range runs {
		d.notify(span.add(<-done))
	}
	return runs
}

// execute runs one hook of any kind and checks its output.
func (d *Dispatcher) execute(ctx context.Context, r *run, in Input, stdin []byte, merr error) Notice {
	var n Notice
	switch {
	case r.h.callback != nil:
		n = d.runCallback(ctx, r, in)
	case merr != nil:
		r.failure = fmt.Sprintf("%s: cannot encode the input: %v", r.label(), merr)
		n = Notice{Stderr: merr.Error(), ExitCode: -1, Outcome: Failed}
	case r.h.kind == "http":
		n = d.runHTTP(ctx, r, stdin)
	case r.h.kind == "prompt":
		n = d.runPrompt(ctx, r, stdin)
	default:
		n = d.runCommand(ctx, r, stdin)
	}
	if r.hasOut {
		if err := r.out.validate(r.ev); err != nil {
			r.hasOut = false
			r.failure = fmt.Sprintf("%s: invalid output: %v", r.label(), err)
			n.Outcome = Failed
		} else if r.out.Async {
			r.hasOut = false
		}
	}
	if r.denyOnly {
		d.dropAllow(r)
	}
	// onFailure "block": a hook that failed blocks its event as exit 2
	// would, except for the events whose block keeps the agent going.
	if r.h.failStop && !r.blocked && r.ev != Stop && r.ev != SubagentStop {
		switch {
		case r.failure != "":
			r.blocked, r.stderr = true, strings.TrimPrefix(r.failure, r.label()+": ")
		case r.timedOut:
			r.blocked, r.stderr = true, strings.TrimPrefix(r.lateText(), r.label()+": ")
		}
	}
	return n
}

// fill completes the common fields of an input of ev.
func (d *Dispatcher) fill(b *Base, ev Event) {
	if d == nil {
		return
	}
	if b.SessionID == "" {
		b.SessionID = d.cfg.SessionID
	}
	if b.TranscriptPath == "" {
		b.TranscriptPath = d.cfg.TranscriptPath
	}
	if b.Cwd == "" {
		b.Cwd = d.cfg.Cwd
	}
	b.HookEventName = ev
}

// hookContext derives the context one hook runs under.
func (r *run) context(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.timeout())
}

// ended records why a hook's context ended, if it did.
func (r *run) ended(parent, hctx context.Context) bool {
	switch {
	case parent.Err() != nil:
		r.canceled = true
	case hctx.Err() != nil:
		r.timedOut = true
	default:
		return false
	}
	return true
}

func (d *Dispatcher) runCallback(ctx context.Context, r *run, in Input) Notice {
	hctx, cancel := r.context(ctx)
	defer cancel()
	type reply struct {
		out Output
		err error
	}
	ch := make(chan reply, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- reply{err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}
			}
		}()
		out, err := r.h.callback(hctx, in, toolUseID(in))
		ch <- reply{out, err}
	}()
	select {
	case rep := <-ch:
		if rep.err != nil {
			r.failure = fmt.Sprintf("%s: %v", r.label(), rep.err)
			r.cause = rep.err
			return Notice{Stderr: rep.err.Error(), ExitCode: 1, Outcome: Failed}
		}
		r.out, r.hasOut = rep.out, true
		b, _ := json.Marshal(rep.out)
		return Notice{Output: string(b), Stdout: string(b), Outcome: Success}
	case <-hctx.Done():
		r.ended(ctx, hctx)
		return Notice{Stderr: r.lateText(), ExitCode: 1, Outcome: Cancelled}
	}
}
