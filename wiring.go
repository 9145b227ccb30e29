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

// config is o as the session reads it; nil stays nil (the defaults).
func (o *Options) config() *conversation.Config {
	if o == nil {
		return nil
	}
	return &conversation.Config{
		Model:                      o.Model,
		FallbackModels:             o.FallbackModels,
		SystemPrompt:               o.SystemPrompt,
		AppendSystemPrompt:         o.AppendSystemPrompt,
		ExcludeDynamicSystemPrompt: o.ExcludeDynamicSystemPrompt,
		EmptySystemPrompt:          o.EmptySystemPrompt,
		Cwd:                        o.Cwd,
		AdditionalDirectories:      o.AdditionalDirectories,
		Tools:                      o.Tools,
		CustomTools:                o.CustomTools,
		ToolSearch:                 conversation.ToolSearchMode(o.ToolSearch),
		MCPServers:                 o.MCPServers,
		MCPConnector:               o.MCPConnector,
		StrictMCPConfig:            o.StrictMCPConfig,
		MCPStartTimeout:            o.MCPStartTimeout,
		Plugins:                    convertSlice(o.Plugins, func(p PluginConfig) conversation.PluginConfig { return conversation.PluginConfig(p) }),
		AllowedTools:               o.AllowedTools,
		DisallowedTools:            o.DisallowedTools,
		PermissionMode:             o.PermissionMode,
		CanUseTool:                 canUseTool(o.CanUseTool),
		Hooks:                      o.Hooks,
		IncludeHookEvents:          o.IncludeHookEvents,
		ForwardSubagentText:        o.ForwardSubagentText,
		SettingSources:             o.SettingSources,
		ConfineProjectConfig:       o.ConfineProjectConfig,
		Skills:                     o.Skills,
		Sandbox:                    o.Sandbox.config(),
		Settings:                   o.Settings,
		MaxTurns:                   o.MaxTurns,
		MaxBudgetUSD:               o.MaxBudgetUSD,
		ModelPricing:               o.ModelPricing,
		Effort:                     o.Effort,
		MaxTokens:                  o.MaxTokens,
		ContextManagement:          o.ContextManagement,
		AutoCompactWindow:          o.AutoCompactWindow,
		DisableAutoCompact:         o.DisableAutoCompact,
		Thinking:                   (*conversation.ThinkingConfig)(o.Thinking),
		MaxThinkingTokens:          o.MaxThinkingTokens,
		OutputFormat:               (*conversation.OutputFormat)(o.OutputFormat),
		MaxStructuredOutputRetries: o.MaxStructuredOutputRetries,
		Betas:                      o.Betas,
		TaskBudget:                 (*conversation.TaskBudget)(o.TaskBudget),
		IncludePartialMessages:     o.IncludePartialMessages,
		Agents:                     agents(o.Agents),
		Agent:                      o.Agent,
		AskUser:                    o.AskUser,
		Provider:                   o.Provider,
		API:                        (*conversation.APIOptions)(o.API),
		SessionID:                  o.SessionID,
		Resume:                     o.Resume,
		Continue:                   o.Continue,
		ForkSession:                o.ForkSession,
		ResumeSessionAt:            o.ResumeSessionAt,
		ResumeDropsTurn:            o.ResumeDropsTurn,
		Title:                      o.Title,
		NoSessionPersistence:       o.NoSessionPersistence,
		ConfigDir:                  o.ConfigDir,
		SessionStore:               o.SessionStore,
		SessionStoreLeaseTTL:       o.SessionStoreLeaseTTL,
		EnableFileCheckpointing:    o.EnableFileCheckpointing,
		Env:                        o.Env,
		ExposeCredentials:          o.ExposeCredentials,
		Logger:                     o.Logger,
		Observer:                   o.Observer,
	}
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
