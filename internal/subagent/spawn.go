package subagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lazy"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
	"github.com/google/uuid"
)

// Child is what a Spawner asks its host to build: the engine session of
// one subagent.
type Child struct {
	Def   Definition
	Agent lineage.Agent
	// Model is the model the call or the definition asks for, resolved;
	// "" means the parent's.
	Model string
	// Effort is the effort the call or the definition asks for; "" means
	// the session's.
	Effort string
	// Tools are the names of the child's tools, in order: never one its
	// parent lacks or the session disallows. "Agent" is among them only
	// when it may nest, and is then AgentTool.
	Tools     []string
	AgentTool tool.Tool
	// ParentToolUseID is the id of the Agent call that started the child,
	// ParentAgentID the agent that made it ("" for the main loop).
	ParentToolUseID string
	ParentAgentID   string
	// BuiltIn is set when Def is agentloop's own general-purpose agent,
	// not one the caller or a .claude/agents file defined.
	BuiltIn bool
	// Cwd is where the child works: the session's directory or its
	// worktree.
	Cwd string
	// Hooks are the child's hook points: the SubagentStop hooks and the
	// notices of the background subagents it starts.
	Hooks engine.HookPoints
	// Record, when set, is the child's engine.Config.Record: the run's
	// transcript (Spawner.Transcript).
	Record func(message.Message)
}

// A Transcript records one subagent run for its host: the messages of the
// child's history (as engine.Config.Record gets them), and how the run
// ended.
type Transcript interface {
	Record(m message.Message)
	// Close ends the transcript once the run has ended as o says; it is
	// called once, also when the run never started (o.Err set).
	Close(o Outcome)
}

// A Spawner is the Agent tool of one session and of each of its subagents:
// it checks the call, starts the child (in the foreground or the
// background, in a worktree or not), runs the SubagentStart and
// SubagentStop hooks around it and reports its answer. What it needs from
// the session is in its fields; all are required but ForwardText.
//
// A Spawner is not changed after its first use and is safe for concurrent
// use.
type Spawner struct {
	// Env is the session's environment: its id, directory and process
	// environment, and the background registry ([For]).
	Env *tool.Env
	// Lineage is what the session shares with its subagents (budget,
	// disallowed tools, authoriser).
	Lineage *lineage.Lineage
	// Hooks runs the SubagentStart and SubagentStop hooks.
	Hooks *hooks.Dispatcher
	// HookBase is the common hook input of agent's loop.
	HookBase func(agent lineage.Agent) hooks.Base
	// Agents returns the definitions the model may name.
	Agents func() map[string]Definition
	// SetMode gives agent the permission mode its definition asks for,
	// within what parent's mode allows.
	SetMode func(parent, agent lineage.Agent, want vocab.PermissionMode)
	// StopHooks returns agent's hook points, which run the SubagentStop
	// hooks when it stops on its own and then set *ran; last is its last
	// reply's text.
	StopHooks func(agent lineage.Agent, last func() string, ran *bool) engine.HookPoints
	// Engine builds the child's engine session.
	Engine func(c Child) (*engine.Session, error)
	// Follow keeps the child's MCP tools current while it runs; the
	// returned function stops that.
	Follow func(child *engine.Session, parent, agent lineage.Agent, def Definition) (stop func())
	// Note reports a problem the user should see (a worktree kept on an
	// error).
	Note func(text string)
	// ForwardText streams the child's text as it is written, not only
	// its final answer.
	ForwardText bool
	// Transcript, when set, opens the transcript of the run of c that t
	// describes (nil when none is kept), before the child is built.
	Transcript func(c Child, t Task) Transcript
}

// call is the Agent tool's input.
type call struct {
	Description     string `json:"description"`
	Prompt          string `json:"prompt"`
	SubagentType    string `json:"subagent_type,omitempty"`
	Model           string `json:"model,omitempty"`
	Effort          string `json:"effort,omitempty"`
	RunInBackground bool   `json:"run_in_background,omitempty"`
	Isolation       string `json:"isolation,omitempty"`
}

var schemaOnce lazy.Value[json.RawMessage] // the value of schema, built at its first use

// schema returns the Agent tool's input schema, built once: every
// session's Agent tool shares it.
func schema() json.RawMessage { return schemaOnce.Get(buildSchema) }

func buildSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"description":{"type":"string"},"prompt":{"type":"string"},"subagent_type":{"type":"string"},"model":{"type":"string","enum":["sonnet","opus","haiku","fable"]},"effort":` +
		string(vocab.Efforts.Enum()) + `,"run_in_background":{"type":"boolean"},"isolation":{"type":"string","enum":["worktree","remote"]}},"required":["description","prompt"],"additionalProperties":false}`)
}

// Tool is the Agent tool of the loop parent, whose own tools parentTools
// returns: a subagent gets no tool its parent lacks.
func (sp *Spawner) Tool(parent lineage.Agent, parentTools func() []string) tool.Tool {
	return sp.tool(toolDescription(sp.Agents()), parent, parentTools)
}

func (sp *Spawner) tool(desc string, parent lineage.Agent, parentTools func() []string) tool.Tool {
	return tool.New("Agent", desc, func(ctx context.Context, in call, c *tool.Call) (tool.Result, error) {
		return sp.run(ctx, in, c, parent, parentTools())
	}, &tool.Options{Schema: schema()})
}

// toolDescription is the Agent tool's description listing agents.
func toolDescription(agents map[string]Definition) string {
	var names []string
	for n, d := range agents {
		names = append(names, fmt.Sprintf("- %s: %s", n, d.Description))
	}
	sort.Strings(names)
	return agentDescription(strings.Join(names, "\n"))
}

// ToolSource is what LazyTool asks of its loop: the agent definitions the
// description lists (at once), and at the tool's first call the spawner
// (which must list the same agents), the loop and its tools (as
// Spawner.Tool's parent and parentTools).
type ToolSource interface {
	Agents() map[string]Definition
	Spawner() *Spawner
	Parent() lineage.Agent
	ParentTools() []string
}

// LazyTool is Spawner.Tool for src's spawner, made by the tool's first
// call: a loop that never delegates keeps the tool's description (shared,
// see agentDescription) and src, not the spawner and its handler. Its Info
// is Spawner.Tool's; it is safe for concurrent use.
func LazyTool(src ToolSource) tool.Tool {
	return &lazyTool{desc: toolDescription(src.Agents()), src: src}
}

// lazyTool is the Agent tool whose spawner is made by its first call.
type lazyTool struct {
	desc string
	src  ToolSource
	once sync.Once
	t    tool.Tool // the built tool, once made
}

func (l *lazyTool) Info() tool.Info {
	return tool.Info{Name: "Agent", Description: l.desc, InputSchema: schema()}
}

func (l *lazyTool) Run(ctx context.Context, c *tool.Call) (tool.Result, error) {
	l.once.Do(func() { l.t = l.src.Spawner().tool(l.desc, l.src.Parent(), l.src.ParentTools) })
	return l.t.Run(ctx, c)
}

// start is one subagent being started.
type start struct {
	def         Definition
	in          call
	parent      lineage.Agent
	agent       lineage.Agent
	parentTools []string
	wt          *Worktree
	emit        func(message.Message)
}

// run runs one subagent of the loop parent: in the foreground, to
// completion, reporting its final answer; or with run_in_background, on
// its own goroutine, reporting at once where its answer will be (see
// launch). With isolation "worktree" it works in a new git worktree. Once
// the session's budget is spent, no subagent starts.
func (sp *Spawner) run(ctx context.Context, in call, c *tool.Call, parent lineage.Agent, parentTools []string) (tool.Result, error) {
	typ := in.SubagentType
	if typ == "" {
		typ = GeneralPurpose
	}
	def, ok := sp.Agents()[typ]
	if !ok {
		var known []string
		for n := range sp.Agents() {
			known = append(known, n)
		}
		sort.Strings(known)
		return tool.Error(fmt.Sprintf("Agent type %q not found. Available agents: %s", typ, strings.Join(known, ", "))), nil
	}
	switch in.Isolation {
	case "", "worktree":
	case "remote":
		return tool.Error(`isolation "remote" is not supported: agentloop runs subagents on this machine only. ` +
			`Leave isolation out, or use "worktree".`), nil
	default:
		return tool.Error(fmt.Sprintf("isolation %q is not one of worktree, remote", in.Isolation)), nil
	}
	if refusal := sp.Lineage.SpawnRefusal(); refusal != "" {
		StatsFor(sp.Env).refused()
		return tool.Error(refusal), nil
	}
	st := start{def: def, in: in, parent: parent, parentTools: parentTools, emit: engine.Emitter(ctx)}
	if st.emit == nil {
		st.emit = func(message.Message) {}
	}
	st.agent = sp.Lineage.Child(parent, newID(), typ, def.MaxTurns)
	st.in.RunInBackground = in.RunInBackground || def.Background
	sp.SetMode(parent, st.agent, def.PermissionMode)
	task := Task{ID: st.agent.ID, ToolUseID: c.ID, Description: in.Description, Type: typ, Prompt: in.Prompt,
		Depth: st.agent.Depth, Background: st.in.RunInBackground, PromptUUID: uuid.NewString(), RunID: newRunID()}
	if in.Isolation == "worktree" {
		var err error
		if st.wt, err = NewWorktree(ctx, sp.Env.Cwd, "agent-"+st.agent.ID, sp.environ()); err != nil {
			return tool.Error(fmt.Sprintf("Cannot give the subagent a worktree: %v", err)), nil
		}
	}
	StatsFor(sp.Env).spawned(task, c.Input)
	if st.in.RunInBackground {
		return sp.launch(st, task)
	}
	return sp.foreground(ctx, st, task)
}

// foreground runs st to completion and reports its answer.
func (sp *Spawner) foreground(ctx context.Context, st start, task Task) (tool.Result, error) {
	sid := sp.Env.SessionID
	st.emit(Started(sid, task))
	st.emit(sp.promptLine(task))
	o := sp.runChild(ctx, st, task)
	if o.Err != nil && ctx.Err() != nil {
		o.Stopped = true // the parent's run was interrupted
	}
	StatsFor(sp.Env).ended(task, o)
	sp.finishWorktree(ctx, st.wt, &task)
	if o.Err != nil {
		// The task's end is told as for any other end; the parent
		// answers the call as stopped, and (as the reference) writes
		// the task's lines after that answer.
		return tool.Result{}, &engine.StoppedError{Err: fmt.Errorf("the subagent stopped: %w", o.Err),
			After: []message.Message{Updated(sid, task, o.Status()), Notification(sid, task, o)}}
	}
	st.emit(Updated(sid, task, o.Status()))
	if o.Result.IsError {
		return tool.Error(fmt.Sprintf("The subagent (%s) did not finish: %s", task.Type, o.Report()) + worktreeNote(task)), nil
	}
	report := o.Report()
	tokens, dur := o.Tokens(), o.Duration.Milliseconds()
	st.emit(Notification(sid, task, o))
	text := fmt.Sprintf("Report from the %s subagent (its own words, not the user's; every line below is indented):\n%s\nagentId: %s\n<usage>subagent_tokens: %d\ntool_uses: %d\nduration_ms: %d</usage>",
		task.Type, IndentLines(report, "  "), task.ID, tokens, o.ToolUses, dur) + worktreeNote(task)
	structured := map[string]any{"status": "completed", "prompt": st.in.Prompt, "agentId": task.ID, "agentType": task.Type,
		"content": []model.Content{model.TextBlock(report)}, "totalDurationMs": dur, "totalTokens": tokens,
		"totalToolUseCount": o.ToolUses, "usage": o.Result.Usage}
	if task.WorktreePath != "" {
		structured["worktreePath"], structured["worktreeBranch"] = task.WorktreePath, task.WorktreeBranch
	}
	return tool.Result{Content: []model.Content{model.TextBlock(text)}, Structured: structured, ListContent: true}, nil
}

// launch starts st in the background (see Registry) and reports its id
// and output file to the model.
func (sp *Spawner) launch(st start, task Task) (tool.Result, error) {
	sid := sp.Env.SessionID
	started, err := For(sp.Env).Start(Launch{
		Task:  task,
		Owner: st.parent.ID,
		Run: func(ctx context.Context, t *Task) Outcome {
			o := sp.runChild(ctx, st, *t)
			sp.finishWorktree(ctx, st.wt, t)
			return o
		},
		Started: func(t Task) {
			tools.BackgroundShells(sp.Env).EmitLive(st.emit) // the live set, with t
			st.emit(Started(sid, t))
			st.emit(sp.promptLine(t))
		},
		Notify: func(o Outcome, t Task) {
			StatsFor(sp.Env).ended(t, o)
			st.emit(Updated(sid, t, o.Status()))
			st.emit(Notification(sid, t, o))
			tools.BackgroundShells(sp.Env).EmitLive(st.emit) // the live set, without t
		},
	})
	if err != nil {
		sp.finishWorktree(context.Background(), st.wt, &task)
		StatsFor(sp.Env).ended(task, Outcome{Err: err})
		return tool.Error(fmt.Sprintf("Cannot start the subagent in the background: %v", err)), nil
	}
	text := fmt.Sprintf("The %s subagent is running in the background.\nagentId: %s\nIts final report will be written to %s. "+
		"You will be told when it ends, with its report; do not wait or poll for it. To stop it, call TaskStop with task_id %q.",
		task.Type, started.ID, started.OutputFile, started.ID)
	return tool.Result{
		Content: []model.Content{model.TextBlock(text)},
		Structured: map[string]any{"status": "async_launched", "agentId": started.ID, "description": st.in.Description,
			"prompt": st.in.Prompt, "outputFile": started.OutputFile, "canReadOutputFile": true},
	}, nil
}

// promptLine is the user line that shows a subagent's prompt in the
// parent's stream.
func (sp *Spawner) promptLine(t Task) *message.User {
	parentID := t.ToolUseID
	id := t.PromptUUID
	if id == "" {
		id = uuid.NewString()
	}
	return &message.User{Message: message.UserContent{Role: "user", Content: []model.Content{model.TextBlock(t.Prompt)}},
		ParentToolUseID: &parentID, SessionID: sp.Env.SessionID, UUID: id,
		Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		AgentID:   t.ID, SubagentType: t.Type, TaskDescription: t.Description}
}

// runChild runs st, which task describes, under ctx, in its worktree when
// it has one, with the SubagentStart and SubagentStop hooks around it and
// its transcript (Spawner.Transcript) kept. The background subagents it
// started itself are stopped when it ends.
func (sp *Spawner) runChild(ctx context.Context, st start, task Task) (o Outcome) {
	prompt := st.in.Prompt
	if sub := sp.Hooks.SubagentStart(ctx, hooks.SubagentStartInput{Base: sp.HookBase(st.parent), AgentID: st.agent.ID,
		AgentType: st.agent.Type}); len(sub.AdditionalContext) > 0 {
		prompt += "\n\n" + strings.Join(sub.AdditionalContext, "\n")
	}
	var child *engine.Session
	stopHooksRan := false
	last := func() string { return LastReplyText([]model.Message{child.LastReply()}) }
	c := sp.child(st, task.ToolUseID, sp.StopHooks(st.agent, last, &stopHooksRan))
	if sp.Transcript != nil {
		if tr := sp.Transcript(c, task); tr != nil {
			c.Record = tr.Record
			defer func() { tr.Close(o) }()
		}
	}
	child, err := sp.Engine(c)
	if err != nil {
		return Outcome{Err: err}
	}
	defer sp.Follow(child, st.parent, st.agent, st.def)()
	// The prompt's line in the child's history (and transcript) takes the
	// uuid of the line that shows it in the parent's stream.
	rctx := engine.WithPromptID(ctx, task.PromptUUID)
	progress := func(call model.Content, tokens, toolUses int64, elapsed time.Duration) {
		st.emit(Progress(sp.Env.SessionID, task, Activity(call.Name, call.Input), tokens, toolUses, elapsed, call.Name))
	}
	o = runShowing(rctx, child, []model.Content{model.TextBlock(prompt)}, st.emit, sp.ForwardText, progress)
	_ = For(sp.Env).StopOwned(st.agent.ID)
	if !stopHooksRan && o.Err == nil {
		// The subagent ended without stopping on its own (a limit, an
		// error): SubagentStop hooks still learn of it, but cannot keep
		// it going.
		sp.Hooks.SubagentStop(context.WithoutCancel(ctx), hooks.SubagentStopInput{Base: sp.HookBase(st.agent),
			AgentID: st.agent.ID, AgentType: st.agent.Type, LastAssistantMessage: last()})
	}
	return o
}

// child resolves what st's engine session gets: its model and effort
// (the call's over the definition's), its tools and its directory.
func (sp *Spawner) child(st start, parentID string, hp engine.HookPoints) Child {
	c := Child{Def: st.def, Agent: st.agent, ParentToolUseID: parentID, ParentAgentID: st.parent.ID,
		BuiltIn: isBuiltIn(st.def), Cwd: sp.Env.Cwd, Hooks: For(sp.Env).Hooks(st.agent.ID, hp)}
	switch {
	case st.in.Model != "":
		c.Model = pricing.Resolve(st.in.Model)
	case st.def.Model != "" && st.def.Model != "inherit":
		c.Model = pricing.Resolve(st.def.Model)
	}
	c.Effort = st.def.Effort
	if st.in.Effort != "" {
		c.Effort = st.in.Effort
	}
	if st.wt != nil {
		c.Cwd = st.wt.Cwd
	}
	names := sp.Lineage.SubagentTools(st.parentTools, st.def.Tools, st.def.DisallowedTools)
	if st.agent.Depth >= MaxDepth {
		names = slices.DeleteFunc(names, func(n string) bool { return n == "Agent" })
	}
	c.Tools = names
	if slices.Contains(names, "Agent") {
		c.AgentTool = sp.Tool(st.agent, func() []string { return names })
	}
	return c
}

// finishWorktree removes wt when the subagent left nothing in it, else
// records it in t as kept. Nothing is done for a nil wt.
func (sp *Spawner) finishWorktree(ctx context.Context, wt *Worktree, t *Task) {
	if wt == nil {
		return
	}
	kept, err := wt.Finish(context.WithoutCancel(ctx))
	if kept {
		t.WorktreePath, t.WorktreeBranch = wt.Path, wt.Branch
	}
	if err != nil {
		sp.Note(fmt.Sprintf("the worktree of subagent %s was kept: %v", t.ID, err))
	}
}

// environ is the environment the session gives git.
func (sp *Spawner) environ() []string {
	if sp.Env.Environ != nil {
		return sp.Env.Environ
	}
	return os.Environ()
}

// worktreeNote tells the model where a kept worktree is.
func worktreeNote(t Task) string {
	if t.WorktreePath == "" {
		return ""
	}
	return fmt.Sprintf("\nThe subagent's changes are kept in the git worktree %s on branch %s.", t.WorktreePath, t.WorktreeBranch)
}

// LastReplyText is the text of the last assistant message of a history.
func LastReplyText(h []model.Message) string {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role != "assistant" {
			continue
		}
		var parts []string
		for _, b := range h[i].Content {
			if b.Type == model.TypeText && b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// newID is a fresh agent id.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "a" + hex.EncodeToString(b[:])
}

// lastDescription is the Agent tool description built last, shared by
// the next tool with the same agents (sessions built alike): a session
// keeps no copy of its own.
var lastDescription struct {
	sync.Mutex
	agents, desc string
}

// agentDescription is the Agent tool's description listing agents.
func agentDescription(agents string) string {
	l := &lastDescription
	l.Lock()
	defer l.Unlock()
	if l.desc != "" && l.agents == agents {
		return l.desc
	}
	l.agents = agents
	l.desc = "Delegate a self-contained task to a subagent that works with its own context and tools and reports back. " +
		"Give it a short description and a complete prompt: it cannot see this conversation. Available agents (subagent_type):\n" +
		agents
	return l.desc
}
