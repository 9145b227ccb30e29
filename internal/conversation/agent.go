package conversation

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
	"time"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/internal/subagent"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/uuid"
)

// AgentDefinition is agentloop.AgentDefinition as the session reads it; the fields are
// documented there.
type AgentDefinition struct {
	Description            string         `json:"description"`
	Prompt                 string         `json:"prompt"`
	Tools                  []string       `json:"tools,omitempty"`
	DisallowedTools        []string       `json:"disallowedTools,omitempty"`
	Model                  string         `json:"model,omitempty"`
	Effort                 string         `json:"effort,omitempty"`
	MaxTurns               int            `json:"maxTurns,omitempty"`
	PermissionMode         PermissionMode `json:"permissionMode,omitempty"`
	Skills                 []string       `json:"skills,omitempty"`
	Background             bool           `json:"background,omitempty"`
	OmitClaudeMd           bool           `json:"omitClaudeMd,omitempty"`
	CriticalSystemReminder string         `json:"criticalSystemReminder_EXPERIMENTAL,omitempty"`
	AutoCompactWindow      int            `json:"autoCompactWindow,omitempty"`
	MCPServers             []any          `json:"mcpServers,omitempty"`
	InitialPrompt          string         `json:"initialPrompt,omitempty"`
	Memory                 string         `json:"memory,omitempty"`
}

// GeneralPurposeAgent is the agent used when the model names none.
const GeneralPurposeAgent = "general-purpose"

// MaxSubagentDepth is how many layers of subagents may nest below the main
// loop; the bottom layer has no Agent tool.
const MaxSubagentDepth = 3

var generalPurpose = AgentDefinition{
	Description: "A general agent for research and multi-step tasks that benefit from a fresh context.",
	Prompt: "You are a subagent working on one task delegated by another agent. Do the task with the tools you have, " +
		"then reply with a concise report of what you found or did; your last message is handed back as the result.",
}

type agentIn struct {
	Description     string `json:"description"`
	Prompt          string `json:"prompt"`
	SubagentType    string `json:"subagent_type,omitempty"`
	Model           string `json:"model,omitempty"`
	Effort          string `json:"effort,omitempty"`
	RunInBackground bool   `json:"run_in_background,omitempty"`
	Isolation       string `json:"isolation,omitempty"`
}

var agentSchema = `{"type":"object","properties":{"description":{"type":"string"},"prompt":{"type":"string"},"subagent_type":{"type":"string"},"model":{"type":"string","enum":["sonnet","opus","haiku","fable"]},"effort":` + effortEnum + `,"run_in_background":{"type":"boolean"},"isolation":{"type":"string","enum":["worktree","remote"]}},"required":["description","prompt"],"additionalProperties":false}`

// agents returns the session's agent definitions, general-purpose
// included unless the caller defined their own under that name. The map
// may be shared: callers only read it.
func (s *session) agents() map[string]AgentDefinition {
	if len(s.files.agents) == 0 && len(s.opts.Agents) == 0 {
		return builtinAgents
	}
	out := map[string]AgentDefinition{GeneralPurposeAgent: generalPurpose}
	for k, v := range s.files.agents { // .claude/agents/*.md (projectfiles.go)
		out[k] = v
	}
	for k, v := range s.opts.Agents {
		out[k] = v
	}
	return out
}

// builtinAgents is what agents returns for a session that defines none,
// shared by all such sessions: nobody writes to it.
var builtinAgents = map[string]AgentDefinition{GeneralPurposeAgent: generalPurpose}

// newLineage builds what the session shares with all its subagents: the
// budget, the tools no loop may use, the hooks and the authoriser (with the
// checker's mode and rules).
func (s *session) newLineage() *lineage.Lineage {
	return lineage.New(lineage.Config{
		MaxBudgetUSD:    s.opts.MaxBudgetUSD,
		DisallowedTools: s.opts.DisallowedTools,
		Hooks:           s.hooks,
		Authorize:       s.authorizeAs,
	})
}

// mainAgentTool is the Agent tool of the main loop.
func (s *session) mainAgentTool() tool.Tool {
	return s.agentTool(lineage.Agent{MaxTurns: s.opts.MaxTurns}, func() []string { return s.tools })
}

// agentTool is the Agent tool of the loop parent, whose own tools
// parentTools returns: a subagent gets no tool its parent lacks.
func (s *session) agentTool(parent lineage.Agent, parentTools func() []string) tool.Tool {
	var names []string
	for n, d := range s.agents() {
		names = append(names, fmt.Sprintf("- %s: %s", n, d.Description))
	}
	sort.Strings(names)
	desc := "Delegate a self-contained task to a subagent that works with its own context and tools and reports back. " +
		"Give it a short description and a complete prompt: it cannot see this conversation. Available agents (subagent_type):\n" +
		strings.Join(names, "\n")
	return tool.New("Agent", desc, func(ctx context.Context, in agentIn, call *tool.Call) (tool.Result, error) {
		return s.runAgent(ctx, in, call, parent, parentTools())
	}, &tool.Options{Schema: json.RawMessage(agentSchema)})
}

// runAgent runs one subagent of the loop parent: in the foreground, to
// completion, reporting its final answer; or with run_in_background, on its
// own goroutine, reporting at once where its answer will be (see
// launchAgent). With isolation "worktree" it works in a new git worktree
// (see subagent.NewWorktree). Once the session's budget is spent, no
// subagent starts.
func (s *session) runAgent(ctx context.Context, in agentIn, call *tool.Call, parent lineage.Agent, parentTools []string) (tool.Result, error) {
	typ := in.SubagentType
	if typ == "" {
		typ = GeneralPurposeAgent
	}
	def, ok := s.agents()[typ]
	if !ok {
		var known []string
		for n := range s.agents() {
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
	if refusal := s.lin.SpawnRefusal(); refusal != "" {
		return tool.Error(refusal), nil
	}
	emit := engine.Emitter(ctx)
	if emit == nil {
		emit = func(message.Message) {}
	}
	agent := s.lin.Child(parent, newAgentID(), typ, def.MaxTurns)
	in.RunInBackground = in.RunInBackground || def.Background
	s.setAgentMode(parent, agent, def.PermissionMode)
	task := subagent.Task{ID: agent.ID, ToolUseID: call.ID, Description: in.Description, Type: typ, Prompt: in.Prompt,
		Depth: agent.Depth, Background: in.RunInBackground}
	var wt *subagent.Worktree
	if in.Isolation == "worktree" {
		var err error
		if wt, err = subagent.NewWorktree(ctx, s.env.Cwd, "agent-"+agent.ID, s.gitEnviron()); err != nil {
			return tool.Error(fmt.Sprintf("Cannot give the subagent a worktree: %v", err)), nil
		}
	}
	if in.RunInBackground {
		return s.launchAgent(def, in, parent, agent, parentTools, task, wt, emit)
	}
	sid := s.env.SessionID
	emit(subagent.Started(sid, task))
	emit(s.subagentPromptLine(task))
	o := s.runChild(ctx, def, in, parent, agent, parentTools, task.ToolUseID, wt, emit)
	s.finishWorktree(ctx, wt, &task)
	emit(subagent.Updated(sid, task, o.Status()))
	if o.Err != nil {
		return tool.Result{}, fmt.Errorf("the subagent stopped: %w", o.Err)
	}
	if o.Result.IsError {
		return tool.Error(fmt.Sprintf("The subagent (%s) did not finish: %s", typ, o.Report()) + worktreeNote(task)), nil
	}
	report := o.Report()
	tokens, dur := o.Tokens(), o.Duration.Milliseconds()
	emit(subagent.Notification(sid, task, o))
	text := fmt.Sprintf("Report from the %s subagent (its own words, not the user's; every line below is indented):\n%s\nagentId: %s\n<usage>subagent_tokens: %d\ntool_uses: %d\nduration_ms: %d</usage>",
		typ, subagent.IndentLines(report, "  "), agent.ID, tokens, o.ToolUses, dur) + worktreeNote(task)
	structured := map[string]any{"status": "completed", "prompt": in.Prompt, "agentId": agent.ID, "agentType": typ,
		"content": []model.Content{model.TextBlock(report)}, "totalDurationMs": dur, "totalTokens": tokens,
		"totalToolUseCount": o.ToolUses, "usage": o.Result.Usage}
	if task.WorktreePath != "" {
		structured["worktreePath"], structured["worktreeBranch"] = task.WorktreePath, task.WorktreeBranch
	}
	return tool.Result{Content: []model.Content{model.TextBlock(text)}, Structured: structured, ListContent: true}, nil
}

// launchAgent starts the subagent agent in the background (see
// subagent.Registry) and reports its id and output file to the model.
func (s *session) launchAgent(def AgentDefinition, in agentIn, parent, agent lineage.Agent, parentTools []string, task subagent.Task, wt *subagent.Worktree, emit func(message.Message)) (tool.Result, error) {
	sid := s.env.SessionID
	started, err := subagent.For(s.env).Start(subagent.Launch{
		Task:  task,
		Owner: parent.ID,
		Run: func(ctx context.Context, t *subagent.Task) subagent.Outcome {
			o := s.runChild(ctx, def, in, parent, agent, parentTools, t.ToolUseID, wt, emit)
			s.finishWorktree(ctx, wt, t)
			return o
		},
		Started: func(t subagent.Task) {
			emit(subagent.Started(sid, t))
			emit(s.subagentPromptLine(t))
		},
		Notify: func(o subagent.Outcome, t subagent.Task) {
			emit(subagent.Updated(sid, t, o.Status()))
			emit(subagent.Notification(sid, t, o))
		},
	})
	if err != nil {
		s.finishWorktree(context.Background(), wt, &task)
		return tool.Error(fmt.Sprintf("Cannot start the subagent in the background: %v", err)), nil
	}
	text := fmt.Sprintf("The %s subagent is running in the background.\nagentId: %s\nIts final report will be written to %s. "+
		"You will be told when it ends, with its report; do not wait or poll for it. To stop it, call TaskStop with task_id %q.",
		task.Type, started.ID, started.OutputFile, started.ID)
	return tool.Result{
		Content: []model.Content{model.TextBlock(text)},
		Structured: map[string]any{"status": "async_launched", "agentId": started.ID, "description": in.Description,
			"prompt": in.Prompt, "outputFile": started.OutputFile, "canReadOutputFile": true},
	}, nil
}

// subagentPromptLine is the user line that shows a subagent's prompt in the
// parent's stream.
func (s *session) subagentPromptLine(t subagent.Task) *message.User {
	parentID := t.ToolUseID
	return &message.User{Message: message.UserContent{Role: "user", Content: []model.Content{model.TextBlock(t.Prompt)}},
		ParentToolUseID: &parentID, SessionID: s.env.SessionID, UUID: uuid.NewString(), Timestamp: nowStamp(),
		AgentID: t.ID, SubagentType: t.Type, TaskDescription: t.Description}
}

// runChild runs the subagent agent of the loop parent under ctx, in wt
// when it is not nil, with the SubagentStart and SubagentStop hooks around
// it. The background
// subagents it started itself are stopped when it ends.
func (s *session) runChild(ctx context.Context, def AgentDefinition, in agentIn, parent, agent lineage.Agent, parentTools []string, parentID string, wt *subagent.Worktree, emit func(message.Message)) subagent.Outcome {
	if sub := s.hooks.SubagentStart(ctx, hooks.SubagentStartInput{Base: s.hookBaseFor(parent), AgentID: agent.ID, AgentType: agent.Type}); len(sub.AdditionalContext) > 0 {
		in.Prompt += "\n\n" + strings.Join(sub.AdditionalContext, "\n")
	}
	var child *engine.Session
	stopHooksRan := false
	last := func() string { return lastReplyText(child.History()) }
	cwd := s.env.Cwd
	if wt != nil {
		cwd = wt.Cwd
	}
	child, err := s.childEngine(def, in, agent, parentTools, parentID, cwd, s.subagentHooks(agent, last, &stopHooksRan))
	if err != nil {
		return subagent.Outcome{Err: err}
	}
	defer s.followMCP(child, parent, agent, def)() // mcp_subagent.go
	o := subagent.RunShowing(ctx, child, []model.Content{model.TextBlock(in.Prompt)}, emit, s.opts.ForwardSubagentText)
	_ = subagent.For(s.env).StopOwned(agent.ID)
	if !stopHooksRan && o.Err == nil {
		// The subagent ended without stopping on its own (a limit, an
		// error): SubagentStop hooks still learn of it, but cannot keep
		// it going.
		s.hooks.SubagentStop(context.WithoutCancel(ctx), hooks.SubagentStopInput{Base: s.hookBaseFor(agent), AgentID: agent.ID,
			AgentType: agent.Type, LastAssistantMessage: last()})
	}
	return o
}

// finishWorktree removes wt when the subagent left nothing in it, else
// records it in t as kept. Nothing is done for a nil wt.
func (s *session) finishWorktree(ctx context.Context, wt *subagent.Worktree, t *subagent.Task) {
	if wt == nil {
		return
	}
	kept, err := wt.Finish(context.WithoutCancel(ctx))
	if kept {
		t.WorktreePath, t.WorktreeBranch = wt.Path, wt.Branch
	}
	if err != nil {
		s.diag.Add(DiagOption, fmt.Sprintf("the worktree of subagent %s was kept: %v", t.ID, err))
	}
}

// worktreeNote tells the model where a kept worktree is.
func worktreeNote(t subagent.Task) string {
	if t.WorktreePath == "" {
		return ""
	}
	return fmt.Sprintf("\nThe subagent's changes are kept in the git worktree %s on branch %s.", t.WorktreePath, t.WorktreeBranch)
}

// gitEnviron is the environment the session gives git.
func (s *session) gitEnviron() []string {
	if s.env.Environ != nil {
		return s.env.Environ
	}
	return os.Environ()
}

// backgroundHooks wraps hp, the hook points of the loop owner ("" for the
// main loop), so that the loop hears of the background subagents it starts
// (see subagent.Registry.Hooks).
func (s *session) backgroundHooks(owner string, hp engine.HookPoints) engine.HookPoints {
	return subagent.For(s.env).Hooks(owner, hp)
}

// childEngine builds the engine session of the subagent agent: fresh
// history, the agent's prompt, its tools (never one its parent lacks or the
// session disallows), its working directory cwd, and the session's lineage: the shared budget, the
// provider, the authoriser (rules, mode, hooks) and the hook dispatcher.
// Its costs are reported into the session's totals.
func (s *session) childEngine(def AgentDefinition, in agentIn, agent lineage.Agent, parentTools []string, parentID, cwd string, hp engine.HookPoints) (*engine.Session, error) {
	m := s.eng.Model()
	switch {
	case in.Model != "":
		m = pricing.Resolve(in.Model)
	case def.Model != "" && def.Model != "inherit":
		m = pricing.Resolve(def.Model)
	}
	if err := s.modelAllowed(m, "subagent model"); err != nil { // managed_policy.go
		return nil, err
	}
	effort := s.opts.Effort
	if def.Effort != "" {
		effort = def.Effort
	}
	if in.Effort != "" {
		effort = in.Effort
	}
	names := s.lin.SubagentTools(parentTools, def.Tools, def.DisallowedTools)
	if agent.Depth >= MaxSubagentDepth {
		names = slices.DeleteFunc(names, func(n string) bool { return n == "Agent" })
	}
	var ts []tool.Tool
	for _, n := range names {
		if n == "Agent" {
			ts = append(ts, s.agentTool(agent, func() []string { return names }))
			continue
		}
		if t, ok := s.builtinTool(n); ok {
			ts = append(ts, t)
			continue
		}
		for _, c := range s.customAndMCPTools() {
			if c.Info().Name == n {
				ts = append(ts, c)
			}
		}
	}
	env := *s.env
	env.Model = m
	env.Cwd = cwd
	return engine.New(engine.Config{
		Provider:        s.env.Provider,
		Model:           m,
		System:          []model.Content{model.TextBlock(def.Prompt), model.TextBlock(envBlock(&env, m))},
		Tools:           ts,
		MaxTurns:        agent.MaxTurns,
		Budget:          s.lin,
		Effort:          effort,
		Betas:           s.opts.Betas, // betas.go
		Thinking:        thinkingFor(&s.opts),
		Env:             &env,
		OpeningContext:  s.subagentContext(def),
		ParentToolUseID: &parentID,
		Authorize:       s.lin.AuthorizerFor(agent),
		Hooks:           s.backgroundHooks(agent.ID, hp),
		Parent:          s.eng,
		Compaction:      s.subagentCompaction(def, agent),
		Prices:          s.prices,      // providers.go
		APIProvider:     s.apiProvider, // providers.go
		Observer:        s.opts.Observer,
	})
}

// lastReplyText is the text of the last assistant message of a history.
func lastReplyText(h []model.Message) string {
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

func newAgentID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "a" + hex.EncodeToString(b[:])
}

func nowStamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }
