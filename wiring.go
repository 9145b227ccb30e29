package agentloop

import (
	"context"

	"github.com/agentloop/agentloop/internal/conversation"
)

// The wiring between the API and internal/conversation, which runs the
// session. The root package holds what users type (Options, Client, the
// shapes of requests and answers); conversation holds its own copies of
// those shapes, so that nothing below the root imports it. The copies
// have the same fields in the same order, so most convert with a plain
// Go conversion, which the compiler checks: a field added to one and not
// the other stops the build here.

// init lends the wiring to hosts outside the root (conversation.FromOptions).
func init() {
	conversation.SetOptionsWiring(func(v any) (*conversation.Config, bool) {
		o, ok := v.(*Options)
		if !ok {
			return nil, false
		}
		return o.config(), true
	})
}

// config is o as the session reads it; nil stays nil (the defaults). It
// runs the wiring steps in order; each carries one group of options.
func (o *Options) config() *conversation.Config {
	if o == nil {
		return nil
	}
	c := new(conversation.Config)
	o.wire(c)
	return c
}

// wire runs the wiring steps of o into c, a zero Config.
func (o *Options) wire(c *conversation.Config) {
	for _, step := range wiring {
		step.wire(o, c)
	}
}

// wiring is the list of steps that turn Options into the session's
// Config, one group of related options each; the comment on a step names
// the internal packages its options end up in. A field belongs to exactly
// one step: TestWiringCarriesEveryOption checks that together they carry
// every field, and TestWiringStepsDisjoint that no two steps set the same.
var wiring = []struct {
	name string
	wire func(o *Options, c *conversation.Config)
}{
	// model: the model and the system prompt.
	{"model", func(o *Options, c *conversation.Config) {
		c.Model = o.Model
		c.FallbackModels = o.FallbackModels
		c.SystemPrompt = o.SystemPrompt
		c.AppendSystemPrompt = o.AppendSystemPrompt
		c.ExcludeDynamicSystemPrompt = o.ExcludeDynamicSystemPrompt
		c.EmptySystemPrompt = o.EmptySystemPrompt
	}},
	// tools: the workspace and the tools the model gets.
	{"tools", func(o *Options, c *conversation.Config) {
		c.Cwd = o.Cwd
		c.AdditionalDirectories = o.AdditionalDirectories
		c.Tools = o.Tools
		c.CustomTools = o.CustomTools
		c.ToolSearch = conversation.ToolSearchMode(o.ToolSearch)
		c.Skills = o.Skills
		c.AskUser = o.AskUser
		c.ToolHost = o.ToolHost
	}},
	// mcp: the MCP servers and plugins (internal/mcphost, internal/plugin).
	{"mcp", func(o *Options, c *conversation.Config) {
		c.MCPServers = o.MCPServers
		c.MCPConnector = o.MCPConnector
		c.StrictMCPConfig = o.StrictMCPConfig
		c.MCPStartTimeout = o.MCPStartTimeout
		c.Plugins = convertSlice(o.Plugins, func(p PluginConfig) conversation.PluginConfig { return conversation.PluginConfig(p) })
	}},
	// permissions: who decides a tool call (internal/authorize) and what confines it (internal/sandbox).
	{"permissions", func(o *Options, c *conversation.Config) {
		c.AllowedTools = o.AllowedTools
		c.DisallowedTools = o.DisallowedTools
		c.PermissionMode = o.PermissionMode
		c.CanUseTool = canUseTool(o.CanUseTool)
		c.PermissionPromptTool = o.PermissionPromptTool
		c.Sandbox = o.Sandbox.config()
	}},
	// settings: the hooks and the settings layers.
	{"settings", func(o *Options, c *conversation.Config) {
		c.Hooks = o.Hooks
		c.IncludeHookEvents = o.IncludeHookEvents
		c.SettingSources = o.SettingSources
		c.ConfineProjectConfig = o.ConfineProjectConfig
		c.Settings = o.Settings
	}},
	// limits: the loop's limits and its context (internal/engine, internal/compact).
	{"limits", func(o *Options, c *conversation.Config) {
		c.MaxTurns = o.MaxTurns
		c.MaxBudgetUSD = o.MaxBudgetUSD
		c.ModelPricing = o.ModelPricing
		c.Effort = o.Effort
		c.MaxTokens = o.MaxTokens
		c.ContextManagement = o.ContextManagement
		c.AutoCompactWindow = o.AutoCompactWindow
		c.DisableAutoCompact = o.DisableAutoCompact
		c.Thinking = (*conversation.ThinkingConfig)(o.Thinking)
		c.MaxThinkingTokens = o.MaxThinkingTokens
		c.Betas = o.Betas
		c.TaskBudget = (*conversation.TaskBudget)(o.TaskBudget)
	}},
	// output: what the stream carries.
	{"output", func(o *Options, c *conversation.Config) {
		c.OutputFormat = (*conversation.OutputFormat)(o.OutputFormat)
		c.MaxStructuredOutputRetries = o.MaxStructuredOutputRetries
		c.IncludePartialMessages = o.IncludePartialMessages
		c.ForwardSubagentText = o.ForwardSubagentText
	}},
	// agents: the subagents (internal/subagent).
	{"agents", func(o *Options, c *conversation.Config) {
		c.Agents = agents(o.Agents)
		c.Agent = o.Agent
	}},
	// provider: the model client.
	{"provider", func(o *Options, c *conversation.Config) {
		c.Provider = o.Provider
		c.API = (*conversation.APIOptions)(o.API)
		c.Env = o.Env
		c.ExposeCredentials = o.ExposeCredentials
	}},
	// session: where the conversation comes from and goes (internal/transcript, session stores).
	{"session", func(o *Options, c *conversation.Config) {
		c.SessionID = o.SessionID
		c.Resume = o.Resume
		c.Continue = o.Continue
		c.ForkSession = o.ForkSession
		c.ResumeSessionAt = o.ResumeSessionAt
		c.ResumeDropsTurn = o.ResumeDropsTurn
		c.Title = o.Title
		c.NoSessionPersistence = o.NoSessionPersistence
		c.ConfigDir = o.ConfigDir
		c.SessionStore = o.SessionStore
		c.SessionStoreLeaseTTL = o.SessionStoreLeaseTTL
		c.EnableFileCheckpointing = o.EnableFileCheckpointing
	}},
	// observe: logs and traces.
	{"observe", func(o *Options, c *conversation.Config) {
		c.Logger = o.Logger
		c.Observer = o.Observer
	}},
}

// canUseTool adapts the host's callback to the session's request and
// answer shapes.
func canUseTool(f CanUseTool) conversation.CanUseTool {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, req conversation.PermissionRequest) (conversation.PermissionResult, error) {
		res, err := f(ctx, PermissionRequest(req))
		return conversation.PermissionResult(res), err
	}
}

// config is s as the session reads it.
func (s *SandboxSettings) config() *conversation.SandboxSettings {
	if s == nil {
		return nil
	}
	return &conversation.SandboxSettings{
		Enabled:                  s.Enabled,
		FailIfUnavailable:        s.FailIfUnavailable,
		AutoAllowBashIfSandboxed: s.AutoAllowBashIfSandboxed,
		AllowUnsandboxedCommands: s.AllowUnsandboxedCommands,
		ExcludedCommands:         s.ExcludedCommands,
		Filesystem:               (*conversation.SandboxFilesystem)(s.Filesystem),
		Network:                  (*conversation.SandboxNetwork)(s.Network),
	}
}

// agents is the subagent definitions as the session reads them.
func agents(m map[string]AgentDefinition) map[string]conversation.AgentDefinition {
	if m == nil {
		return nil
	}
	out := make(map[string]conversation.AgentDefinition, len(m))
	for name, d := range m {
		out[name] = conversation.AgentDefinition(d)
	}
	return out
}

// contextUsage is the session's measure in the API's shape.
func contextUsage(u *conversation.ContextUsage) *ContextUsage {
	if u == nil {
		return nil
	}
	out := &ContextUsage{
		Categories:           convertSlice(u.Categories, func(c conversation.ContextCategory) ContextCategory { return ContextCategory(c) }),
		TotalTokens:          u.TotalTokens,
		MaxTokens:            u.MaxTokens,
		Percentage:           u.Percentage,
		Model:                u.Model,
		AutoCompactThreshold: u.AutoCompactThreshold,
		IsAutoCompactEnabled: u.IsAutoCompactEnabled,
		Measured:             u.Measured,
		FromAPIUsage:         u.FromAPIUsage,
	}
	if b := u.MessageBreakdown; b != nil {
		out.MessageBreakdown = &MessageBreakdown{
			ToolCallTokens:         b.ToolCallTokens,
			ToolResultTokens:       b.ToolResultTokens,
			AttachmentTokens:       b.AttachmentTokens,
			AssistantMessageTokens: b.AssistantMessageTokens,
			UserMessageTokens:      b.UserMessageTokens,
			ToolCallsByType:        convertSlice(b.ToolCallsByType, func(t conversation.ToolCallTokens) ToolCallTokens { return ToolCallTokens(t) }),
			AttachmentsByType:      convertSlice(b.AttachmentsByType, func(a conversation.AttachmentTokens) AttachmentTokens { return AttachmentTokens(a) }),
		}
	}
	return out
}

// convertSlice maps in through f; nil stays nil and empty stays empty
// (the JSON of a result distinguishes them).
func convertSlice[From, To any](in []From, f func(From) To) []To {
	if in == nil {
		return nil
	}
	out := make([]To, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
