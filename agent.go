package agentloop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
	"github.com/google/uuid"
)

// AgentDefinition describes a subagent the model can delegate to with the
// Agent tool. A subagent starts fresh: its own system prompt (Prompt), the
// task the model gives it, and its own tools; it does not see the parent's
// conversation. Its final answer becomes the Agent call's result, and its
// cost counts towards the parent's.
type AgentDefinition struct {
	// Description tells the model when to use the agent.
	Description string `json:"description"`
	// Prompt is the agent's system prompt.
	Prompt string `json:"prompt"`
	// Tools lists the tools the agent may use; nil means the parent's
	// tools. Only tools the parent has, and that the session does not
	// disallow, are given. DisallowedTools removes tools and wins over
	// Tools.
	Tools           []string `json:"tools,omitempty"`
	DisallowedTools []string `json:"disallowedTools,omitempty"`
	// Model is an alias, a model id or "inherit" (the default).
	Model string `json:"model,omitempty"`
	// Effort overrides the session's effort for this agent.
	Effort string `json:"effort,omitempty"`
	// MaxTurns caps the agent's tool-using turns. The agent never gets
	// more than the loop that starts it; 0 means that loop's limit, or
	// lineage's default of 100 when there is none.
	MaxTurns int `json:"maxTurns,omitempty"`
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

const agentSchema = `{"type":"object","properties":{"description":{"type":"string"},"prompt":{"type":"string"},"subagent_type":{"type":"string"},"model":{"type":"string","enum":["sonnet","opus","haiku","fable"]},"effort":{"type":"string","enum":["low","medium","high","xhigh","max"]},"run_in_background":{"type":"boolean"},"isolation":{"type":"string","enum":["worktree","remote"]}},"required":["description","prompt"],"additionalProperties":false}`

// agents returns the session's agent definitions, general-purpose
// included unless the caller defined their own under that name.
func (s *session) agents() map[string]AgentDefinition {
	out := map[string]AgentDefinition{GeneralPurposeAgent: generalPurpose}
	for k, v := range s.opts.Agents {
		out[k] = v
	}
	return out
}

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

// runAgent runs one subagent of the loop parent to completion and reports
// its final answer. Once the session's budget is spent, no subagent starts.
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
	if refusal := s.lin.SpawnRefusal(); refusal != "" {
		return tool.Error(refusal), nil
	}
	if in.RunInBackground || in.Isolation != "" {
		// Background and isolated runs are not supported yet; run in the
		// foreground, in place.
		in.RunInBackground, in.Isolation = false, ""
	}
	emit := engine.Emitter(ctx)
	if emit == nil {
		emit = func(message.Message) {}
	}
	agent := s.lin.Child(parent, newAgentID(), typ, def.MaxTurns)
	parentID := call.ID
	sid := s.env.SessionID
	start := time.Now()
	emit(&message.System{Subtype: "task_started", SessionID: sid, UUID: uuid.NewString(), Data: rawFields(map[string]any{
		"task_id": agent.ID, "tool_use_id": parentID, "description": in.Description, "subagent_type": typ,
		"is_backgrounded": false, "spawn_depth": agent.Depth, "task_type": "local_agent", "prompt": in.Prompt})})
	emit(&message.User{Message: message.UserContent{Role: "user", Content: []model.Content{model.TextBlock(in.Prompt)}},
		ParentToolUseID: &parentID, SessionID: sid, UUID: uuid.NewString(), Timestamp: nowStamp(),
		AgentID: agent.ID, SubagentType: typ, TaskDescription: in.Description})
	if sub := s.hooks.SubagentStart(ctx, hooks.SubagentStartInput{Base: s.hookBaseFor(parent), AgentID: agent.ID, AgentType: typ}); len(sub.AdditionalContext) > 0 {
		in.Prompt += "\n\n" + strings.Join(sub.AdditionalContext, "\n")
	}

	var child *engine.Session
	stopHooksRan := false
	last := func() string { return lastReplyText(child.History()) }
	child, err := s.childEngine(def, in, agent, parentTools, parentID, s.subagentHooks(agent, last, &stopHooksRan))
	if err != nil {
		return tool.Result{}, err
	}
	var toolUses atomic.Int64
	res, runErr := child.Run(ctx, []model.Content{model.TextBlock(in.Prompt)}, func(m message.Message) bool {
		switch m := m.(type) {
		case *message.Assistant:
			// Only a subagent's tool calls and their results are shown,
			// as the reference does; its text is handed back at the end.
			if len(m.Message.Content) > 0 && m.Message.Content[0].Type == model.TypeToolUse {
				toolUses.Add(1)
				emit(m)
			}
		case *message.User:
			emit(m)
		case *message.System:
			// A subagent's denials are the user's to see too.
			if m.Subtype == message.SubtypePermissionDenied {
				emit(m)
			}
		}
		return true
	})
	if !stopHooksRan && runErr == nil {
		// The subagent ended without stopping on its own (a limit, an
		// error): SubagentStop hooks still learn of it, but cannot keep
		// it going.
		s.hooks.SubagentStop(ctx, hooks.SubagentStopInput{Base: s.hookBaseFor(agent), AgentID: agent.ID, AgentType: typ,
			LastAssistantMessage: last()})
	}
	status := "completed"
	if runErr != nil || res == nil || res.IsError {
		status = "failed"
	}
	emit(&message.System{Subtype: "task_updated", SessionID: sid, UUID: uuid.NewString(), Data: rawFields(map[string]any{
		"task_id": agent.ID, "patch": map[string]any{"status": status, "end_time": time.Now().UnixMilli()}})})
	if runErr != nil {
		return tool.Result{}, fmt.Errorf("the subagent stopped: %w", runErr)
	}
	if res.IsError {
		detail := strings.Join(res.Errors, "; ")
		if detail == "" {
			detail = res.Text()
		}
		return tool.Error(fmt.Sprintf("The subagent (%s) did not finish: %s", typ, detail)), nil
	}
	report := res.Text()
	tokens := res.Usage.InputTokens + res.Usage.OutputTokens + res.Usage.CacheCreationInputTokens + res.Usage.CacheReadInputTokens
	dur := time.Since(start).Milliseconds()
	emit(&message.System{Subtype: "task_notification", SessionID: sid, UUID: uuid.NewString(), Data: rawFields(map[string]any{
		"task_id": agent.ID, "tool_use_id": parentID, "status": status, "summary": firstLine(report),
		"usage": map[string]any{"total_tokens": tokens, "tool_uses": toolUses.Load(), "duration_ms": dur}})})
	text := fmt.Sprintf("Report from the %s subagent (its own words, not the user's; every line below is indented):\n%s\nagentId: %s\n<usage>subagent_tokens: %d\ntool_uses: %d\nduration_ms: %d</usage>",
		typ, indentLines(report, "  "), agent.ID, tokens, toolUses.Load(), dur)
	return tool.Result{
		Content: []model.Content{model.TextBlock(text)},
		Structured: map[string]any{"status": "completed", "prompt": in.Prompt, "agentId": agent.ID, "agentType": typ,
			"content": []model.Content{model.TextBlock(report)}, "totalDurationMs": dur, "totalTokens": tokens,
			"totalToolUseCount": toolUses.Load(), "usage": res.Usage},
		ListContent: true,
	}, nil
}

// childEngine builds the engine session of the subagent agent: fresh
// history, the agent's prompt, its tools (never one its parent lacks or the
// session disallows), and the session's lineage: the shared budget, the
// provider, the authoriser (rules, mode, hooks) and the hook dispatcher.
// Its costs are reported into the session's totals.
func (s *session) childEngine(def AgentDefinition, in agentIn, agent lineage.Agent, parentTools []string, parentID string, hp engine.HookPoints) (*engine.Session, error) {
	m := s.eng.Model()
	switch {
	case in.Model != "":
		m = pricing.Resolve(in.Model)
	case def.Model != "" && def.Model != "inherit":
		m = pricing.Resolve(def.Model)
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
		if t, ok := tools.Builtin(n); ok {
			ts = append(ts, t)
			continue
		}
		for _, c := range s.opts.CustomTools {
			if c.Info().Name == n {
				ts = append(ts, c)
			}
		}
	}
	env := *s.env
	env.Model = m
	return engine.New(engine.Config{
		Provider:        s.env.Provider,
		Model:           m,
		System:          []model.Content{model.TextBlock(def.Prompt), model.TextBlock(envBlock(&env, m))},
		Tools:           ts,
		MaxTurns:        agent.MaxTurns,
		Budget:          s.lin,
		Effort:          effort,
		Thinking:        thinkingFor(&s.opts),
		Env:             &env,
		ParentToolUseID: &parentID,
		Authorize:       s.lin.AuthorizerFor(agent),
		Hooks:           hp,
		Parent:          s.eng,
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

func rawFields(m map[string]any) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		b, _ := json.Marshal(v)
		out[k] = b
	}
	return out
}

func indentLines(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func nowStamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }
