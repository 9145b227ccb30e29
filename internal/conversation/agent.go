package conversation

import (
	"context"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/internal/subagent"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
)

// AgentDefinition is agentloop.AgentDefinition as the session reads it; the fields are
// documented there.
type AgentDefinition = subagent.Definition

// GeneralPurposeAgent is the agent used when the model names none.
const GeneralPurposeAgent = subagent.GeneralPurpose

// MaxSubagentDepth is how many layers of subagents may nest below the main
// loop; the bottom layer has no Agent tool.
const MaxSubagentDepth = subagent.MaxDepth

// agents returns the session's agent definitions, general-purpose
// included unless the caller defined their own under that name: the
// .claude/agents files (projectfiles.go), then Options.Agents. The map may
// be shared: callers only read it.
func (s *Session) agents() map[string]AgentDefinition {
	return subagent.Definitions(s.files.agents, s.opts.Agents)
}

// newLineage builds what the session shares with all its subagents: the
// budget, the tools no loop may use, the hooks and the authoriser (with the
// checker's mode and rules).
func (s *Session) newLineage() *lineage.Lineage {
	return lineage.New(lineage.Config{
		MaxBudgetUSD:    s.opts.MaxBudgetUSD,
		DisallowedTools: s.opts.DisallowedTools,
		Hooks:           s.hooks,
		Authorize:       s.authorizeAs,
	})
}

// mainAgentTool is the Agent tool of the main loop. Its spawner is made
// by its first call (subagent.LazyTool): an idle session keeps none.
func (s *Session) mainAgentTool() tool.Tool {
	return subagent.LazyTool((*mainAgentSource)(s))
}

// mainAgentSource is the session as the main loop's Agent tool asks it
// (subagent.ToolSource); a conversion, so the tool keeps one pointer.
type mainAgentSource Session

func (m *mainAgentSource) Agents() map[string]AgentDefinition { return (*Session)(m).agents() }
func (m *mainAgentSource) Spawner() *subagent.Spawner         { return (*Session)(m).spawner() }
func (m *mainAgentSource) Parent() lineage.Agent              { return lineage.Agent{MaxTurns: m.opts.MaxTurns} }
func (m *mainAgentSource) ParentTools() []string              { return (*Session)(m).toolNames() }

// spawner is what the Agent tools of the session and its subagents need
// from it (see subagent.Spawner).
func (s *Session) spawner() *subagent.Spawner {
	return &subagent.Spawner{
		Env:         s.env,
		Lineage:     s.lin,
		Hooks:       s.hooks,
		HookBase:    s.hookBaseFor,
		Agents:      s.agents,
		SetMode:     s.setAgentMode,  // projectfiles.go
		StopHooks:   s.subagentHooks, // hookglue.go
		Engine:      s.childEngine,
		Follow:      s.followMCP, // mcp_glue.go
		Note:        func(text string) { s.diag.Add(DiagOption, text) },
		ForwardText: s.opts.ForwardSubagentText,
		Transcript:  s.openSubagentTranscript, // subagent_transcript.go
	}
}

// lazyMainHooks are the main loop's hook points: hookPoints wrapped by
// backgroundHooks, built by the first call of one of them (mainHooks), so
// that an idle session keeps three method values, not the closures.
func (s *Session) lazyMainHooks() engine.HookPoints {
	return engine.HookPoints{
		PromptSubmit: s.mainPromptSubmit,
		AfterTool:    s.mainAfterTool,
		BeforeStop:   s.mainBeforeStop,
	}
}

// mainHooks builds the main loop's hook points once. Two first calls at
// once may both build them; one result is kept (building has no effect
// besides the closures).
func (s *Session) mainHooks() *engine.HookPoints {
	if hp := s.mainHP.Load(); hp != nil {
		return hp
	}
	hp := s.backgroundHooks("", s.hookPoints())
	if s.mainHP.CompareAndSwap(nil, &hp) {
		return &hp
	}
	return s.mainHP.Load()
}

func (s *Session) mainPromptSubmit(ctx context.Context, prompt string) engine.PromptVerdict {
	return s.mainHooks().PromptSubmit(ctx, prompt)
}

func (s *Session) mainAfterTool(ctx context.Context, call *engine.ToolCall, o *engine.ToolOutput) *engine.Halt {
	return s.mainHooks().AfterTool(ctx, call, o)
}

func (s *Session) mainBeforeStop(ctx context.Context, active bool) engine.StopVerdict {
	return s.mainHooks().BeforeStop(ctx, active)
}

// backgroundHooks wraps hp, the hook points of the loop owner ("" for the
// main loop), so that the loop hears of the background subagents it starts
// (see subagent.Registry.Hooks), and the main loop of the background shells
// that ended (tools.Shells.TakeNotices): their notices go to the model with
// the next request, after a tool call or with the next prompt, as the
// reference's task notifications do.
func (s *Session) backgroundHooks(owner string, hp engine.HookPoints) engine.HookPoints {
	// The registry is made when a hook first fires (the first run), not
	// with the session: an idle session keeps none.
	hp = subagent.HooksOf(func() *subagent.Registry { return subagent.For(s.env) }, owner, hp)
	if owner != "" {
		return hp
	}
	shells := tools.BackgroundShells(s.env)
	prev := hp.PromptSubmit
	hp.PromptSubmit = func(ctx context.Context, prompt string) engine.PromptVerdict {
		var v engine.PromptVerdict
		if prev != nil {
			v = prev(ctx, prompt)
		}
		v.Context = append(v.Context, shells.TakeNotices()...)
		return v
	}
	after := hp.AfterTool
	hp.AfterTool = func(ctx context.Context, call *engine.ToolCall, o *engine.ToolOutput) *engine.Halt {
		var h *engine.Halt
		if after != nil {
			h = after(ctx, call, o)
		}
		o.Context = append(o.Context, shells.TakeNotices()...)
		return h
	}
	return hp
}

// childEngine builds the engine session of a subagent: fresh history, the
// agent's prompt, the tools c names (resolved here: built-in, custom and
// MCP; c.AgentTool for Agent), its directory, and the session's lineage:
// the shared budget, the provider, the authoriser (rules, mode, hooks) and
// the hook dispatcher. Its costs are reported into the session's totals.
// A model the managed policy does not allow is an error.
func (s *Session) childEngine(c subagent.Child) (*engine.Session, error) {
	m := c.Model
	if m == "" {
		m = s.engine().Model()
	}
	if err := s.modelAllowed(m, "subagent model"); err != nil { // managed_policy.go
		return nil, err
	}
	effort := s.opts.Effort
	if c.Effort != "" {
		effort = c.Effort
	}
	var ts []tool.Tool
	for _, n := range c.Tools {
		if n == "Agent" {
			ts = append(ts, c.AgentTool)
			continue
		}
		if t, ok := s.builtinTool(n); ok {
			ts = append(ts, t)
			continue
		}
		for _, t := range s.customAndMCPTools() {
			if t.Info().Name == n {
				ts = append(ts, t)
			}
		}
	}
	env := *s.env
	env.Model = m
	env.Cwd = c.Cwd
	parentID := c.ParentToolUseID
	return engine.New(engine.Config{
		Provider:        s.env.Provider,
		Model:           m,
		System:          []model.Content{model.TextBlock(c.Def.Prompt), model.TextBlock(envBlock(&env, m))},
		Tools:           ts,
		MaxTurns:        c.Agent.MaxTurns,
		Budget:          s.lin,
		Effort:          effort,
		Betas:           s.opts.Betas, // betas.go
		Thinking:        thinkingFor(s.opts),
		Env:             &env,
		OpeningContext:  s.subagentContext(c.Def),
		ParentToolUseID: &parentID,
		Authorize:       s.lin.AuthorizerFor(c.Agent),
		Hooks:           c.Hooks,
		Parent:          s.engine(),
		Compaction:      s.subagentCompaction(c.Def, c.Agent),
		Prices:          s.prices,      // providers.go
		APIProvider:     s.apiProvider, // providers.go
		Observer:        s.opts.Observer,
		Record:          c.Record,
	})
}
