package agentloop

import (
	"time"

	"github.com/agentloop/agentloop/internal/conversation"
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
	// PermissionMode runs the agent in its own permission mode, when that
	// mode allows no more than its parent's does:
	// under a parent in bypassPermissions, acceptEdits or auto the agent
	// keeps the parent's mode, and an agent never escalates. A mode it may
	// not have is reported as a diagnostic when it starts.
	PermissionMode PermissionMode `json:"permissionMode,omitempty"`
	// Skills are loaded into the agent's first message, as if it had
	// called the Skill tool for each (names the session has no skill for
	// are reported).
	Skills []string `json:"skills,omitempty"`
	// Background always runs the agent in the background, whatever the
	// Agent call's run_in_background says.
	Background bool `json:"background,omitempty"`
	// OmitClaudeMd leaves the CLAUDE.md files out of the agent's context.
	OmitClaudeMd bool `json:"omitClaudeMd,omitempty"`
	// CriticalSystemReminder is sent to the agent, after its task, as a
	// reminder it must keep to.
	CriticalSystemReminder string `json:"criticalSystemReminder_EXPERIMENTAL,omitempty"`
	// AutoCompactWindow is the context window, in tokens, the agent's
	// own history is compacted within; 0
	// takes the session's (Options.AutoCompactWindow, the settings'
	// autoCompactWindow, else the agent model's window).
	AutoCompactWindow int `json:"autoCompactWindow,omitempty"`
	// The fields below are accepted and reported as not honoured (a
	// DiagAgent diagnostic at session start): MCPServers (servers by name
	// or inline, until MCP servers exist), InitialPrompt (agentloop has
	// no main-thread agent option; subagents ignore it in the reference
	// too) and Memory (agent memory directories).
	MCPServers    []any  `json:"mcpServers,omitempty"`
	InitialPrompt string `json:"initialPrompt,omitempty"`
	Memory        string `json:"memory,omitempty"`
}

// GeneralPurposeAgent is the agent used when the model names none.
const GeneralPurposeAgent = conversation.GeneralPurposeAgent

// MaxSubagentDepth is how many layers of subagents may nest below the main
// loop; the bottom layer has no Agent tool.
const MaxSubagentDepth = conversation.MaxSubagentDepth

// TaskBudget is the token budget of a whole task, told to the model so
// that it can pace its work (Options.TaskBudget). The API enforces
// nothing with it; MaxBudgetUSD and MaxTurns are the hard limits.
type TaskBudget struct {
	// Total is the budget in tokens; it must be positive.
	Total int `json:"total"`
}

// PluginConfig is one local plugin to load.
type PluginConfig struct {
	// Path is the plugin's root directory, the one that holds
	// .claude-plugin/plugin.json. A relative path is relative to the
	// session's working directory (Options.Cwd).
	Path string
	// SkipMCP leaves the plugin's MCP servers out (the SDKs'
	// skipMcpDiscovery, the CLI's --plugin-dir-no-mcp); its other
	// components load.
	SkipMCP bool
}

// SandboxSettings confine Bash commands with the kernel, as the "sandbox"
// object of a settings file does; Options.Sandbox is merged into the
// inline settings (Options.Settings) with the same meaning. Paths are
// absolute ("//path" also works) or relative to Cwd; "~/" is the home
// directory.
//
// Without any sandbox setting (Options.Sandbox nil and no settings file
// setting sandbox.enabled), Bash commands are sandboxed by default where
// the kernel can (Linux with Landlock): they may write only in the
// working directories, the session's temp dir and Filesystem.AllowWrite,
// cannot read what Read deny rules and Filesystem.DenyRead cover, and
// reach the network without restriction. Permission prompts are as
// without a sandbox. Where the kernel cannot, system/init says why
// (sandbox_unavailable) and a notification says it once.
type SandboxSettings struct {
	// Enabled runs Bash commands in the sandbox as the reference does:
	// they may write only in the working directories, the session's
	// temp dir and Filesystem.AllowWrite, and reach the network only
	// through a proxy that admits Network.AllowedDomains and
	// WebFetch(domain:…) allow rules; AutoAllowBashIfSandboxed and
	// FailIfUnavailable apply. False in a non-nil SandboxSettings turns
	// the default sandbox off (a settings file's "enabled": false does
	// too). Plan mode is sandboxed (read-only, no network) whatever this
	// says, where the kernel allows.
	Enabled bool `json:"enabled"`
	// FailIfUnavailable makes the session fail to start, with an error
	// wrapping ErrSandboxUnavailable, where the kernel cannot sandbox.
	// Nil means true when Enabled, as with the SDKs' sandbox option. It
	// applies only when Enabled.
	FailIfUnavailable *bool `json:"failIfUnavailable,omitempty"`
	// AutoAllowBashIfSandboxed (nil: true) runs sandboxed Bash calls that
	// would otherwise be asked, when Enabled (never with the default
	// sandbox); deny and ask rules still apply.
	AutoAllowBashIfSandboxed *bool `json:"autoAllowBashIfSandboxed,omitempty"`
	// AllowUnsandboxedCommands (nil: true) honours Bash's
	// dangerouslyDisableSandbox; such calls need the usual permission.
	AllowUnsandboxedCommands *bool `json:"allowUnsandboxedCommands,omitempty"`
	// ExcludedCommands run outside the sandbox, with the usual
	// permissions: a command line that is exactly one of these, or one of
	// these followed by arguments, without shell operators.
	ExcludedCommands []string           `json:"excludedCommands,omitempty"`
	Filesystem       *SandboxFilesystem `json:"filesystem,omitempty"`
	Network          *SandboxNetwork    `json:"network,omitempty"`
}

// SandboxFilesystem adds to the paths a sandboxed command may write and
// read.
type SandboxFilesystem struct {
	AllowWrite []string `json:"allowWrite,omitempty"`
	DenyWrite  []string `json:"denyWrite,omitempty"`
	DenyRead   []string `json:"denyRead,omitempty"`
	AllowRead  []string `json:"allowRead,omitempty"`
}

// SandboxNetwork lists the domains a sandboxed command may reach through
// agentloop's proxy ("example.com", "*.example.com"; denied wins), and
// whether it may listen on TCP ports, when SandboxSettings.Enabled; the
// default sandbox does not restrict the network.
type SandboxNetwork struct {
	AllowedDomains    []string `json:"allowedDomains,omitempty"`
	DeniedDomains     []string `json:"deniedDomains,omitempty"`
	AllowLocalBinding bool     `json:"allowLocalBinding,omitempty"`
}

// APIOptions tune the built-in Anthropic provider: how long it waits for the
// API and how often it retries. They apply only when Options.Provider is nil
// (the session builds the provider); with a Provider of your own they are
// reported through the diagnostics (DiagOption) and otherwise ignored. The
// zero value, like a nil *APIOptions, keeps every default.
//
// Precedence for each field: the field when set, else the reference CLI's
// environment variable, else the default (see package model/anthropic). A
// malformed environment variable makes the session fail to start with an
// error naming it.
type APIOptions struct {
	// StreamIdleTimeout is the longest silence allowed between two events
	// of a reply's stream (pings count). Zero: CLAUDE_STREAM_IDLE_TIMEOUT_MS,
	// else 300 s. Negative: no limit. A stalled stream is retried.
	StreamIdleTimeout time.Duration
	// FirstByteTimeout is the longest wait from sending a request to the
	// first event of its stream (connect, headers, first event). Zero:
	// CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS, else 300 s. Negative: no limit.
	FirstByteTimeout time.Duration
	// RequestTimeout bounds each attempt as a whole. Zero: API_TIMEOUT_MS,
	// else no limit. Negative: no limit.
	RequestTimeout time.Duration
	// MaxRetries is how many times a failed request is retried. Nil:
	// CLAUDE_CODE_MAX_RETRIES (capped at 15), else 10. Errors that cannot
	// succeed on retry (a second 401, a second "no such host") end sooner.
	MaxRetries *int
}

// ToolSearchMode switches tool search (Options.ToolSearch). With tool
// search on, deferrable tools (tool.Info.Defer, or tool.Info.MCP, and not
// tool.Info.AlwaysLoad; and the on-demand built-ins NotebookEdit,
// TaskStop, WebFetch and WebSearch unless Options.Tools names them) are
// not declared to the model up front: it is told their names (and search
// hints) and loads the ones it needs with the ToolSearch tool, which
// keeps a large catalogue of tools out of every request.
type ToolSearchMode string

// The tool search modes. A mode "auto:N", N a percentage, is ToolSearchAuto
// with its own threshold.
const (
	// ToolSearchDefault leaves the choice to the ENABLE_TOOL_SEARCH
	// variable (the process environment, the settings' env, Options.Env,
	// the last one set winning). Unset (or empty, or invalid), tool search
	// is on except where the reference turns it off: for models older
	// than the 4.5 generation, for an ANTHROPIC_BASE_URL other than
	// Anthropic's API (loopback addresses count as Anthropic's; only
	// checked when the session builds its own provider) and with
	// CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS set. A diagnostic says when
	// that happens.
	ToolSearchDefault ToolSearchMode = ""
	// ToolSearchOn defers every deferrable tool, whatever the model and
	// the API address (the search runs in agentloop, not in the API).
	ToolSearchOn ToolSearchMode = "true"
	// ToolSearchOff declares every tool up front.
	ToolSearchOff ToolSearchMode = "false"
	// ToolSearchAuto defers the deferrable tools only when their
	// definitions add up to 10% of the model's context window or more.
	ToolSearchAuto ToolSearchMode = "auto"
)
