package agentloop

import (
	"log/slog"
	"time"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/assemble"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/observe"
	"github.com/agentloop/agentloop/pricing"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
)

// PermissionMode sets how tool calls that need approval are handled. The
// modes are listed by [PermissionModes] and parsed by
// [ParsePermissionMode].
type PermissionMode = vocab.PermissionMode

// The permission modes.
const (
	// PermissionDefault runs read-only tools and denies calls that change
	// state unless a rule allows them.
	PermissionDefault = vocab.PermissionDefault
	// PermissionAcceptEdits also approves file edits and writes.
	PermissionAcceptEdits = vocab.PermissionAcceptEdits
	// PermissionPlan runs only read-only tools.
	PermissionPlan = vocab.PermissionPlan
	// PermissionDontAsk denies everything that is not allowed by a rule.
	PermissionDontAsk = vocab.PermissionDontAsk
	// PermissionBypass runs every tool call. A process running as root
	// may use it only with IS_SANDBOX=1 in its environment: otherwise
	// starting in it or switching to it fails with [ErrBypassAsRoot].
	PermissionBypass = vocab.PermissionBypass
	// PermissionAuto lets a model (ClassifierModel, through the session's
	// provider) approve or deny what would otherwise be asked; when it
	// cannot decide, the call is asked (CanUseTool) or denied.
	PermissionAuto = vocab.PermissionAuto
)

// Options configure a run. The zero value (or nil) is a run on the default
// model, in the process's working directory, with the default tools, in
// the default permission mode, without limits.
type Options struct {
	// Model is a model id or alias (opus, sonnet, haiku, fable); empty
	// means ANTHROPIC_MODEL (from the settings' env or the process
	// environment), else the settings' model key, else the default model.
	// A value of spaces only is an ErrInvalidOption.
	Model string
	// FallbackModels are tried in order when the model stays overloaded.
	FallbackModels []string

	// SystemPrompt replaces agentloop's system prompt when non-empty;
	// AppendSystemPrompt is added to whichever prompt is used.
	SystemPrompt       string
	AppendSystemPrompt string
	// ExcludeDynamicSystemPrompt keeps agentloop's system prompt the same
	// for every session, so that its prompt cache is shared across
	// sessions: the per-session environment section (working directory,
	// git, platform, shell, OS version, date, model) is sent in the first
	// user message of the conversation instead, like the CLAUDE.md files.
	// It has no effect (and a diagnostic says so) with SystemPrompt.
	ExcludeDynamicSystemPrompt bool
	// EmptySystemPrompt sends no system prompt of agentloop's own: the
	// requests carry only AppendSystemPrompt, or no system block at all
	// (the TypeScript SDK's systemPrompt [""], the Python SDK's
	// --system-prompt ""). With SystemPrompt it is an ErrInvalidOption;
	// with Agent the agent's prompt is used (a diagnostic says so).
	EmptySystemPrompt bool

	// Cwd is the working directory of the session's tools; empty means
	// the process's working directory.
	Cwd string
	// AdditionalDirectories are further directories the tools may use.
	AdditionalDirectories []string

	// Tools lists the built-in tools to offer by name. Nil means the
	// default set; an empty non-nil slice offers none.
	Tools []string
	// CustomTools are offered alongside the built-in ones.
	CustomTools []Tool
	// ToolSearch switches tool search: deferrable tools (tool.Info.Defer
	// or MCP, unless AlwaysLoad) are named to the model and declared only
	// once it loads them with the ToolSearch tool. The default
	// (ToolSearchDefault) follows ENABLE_TOOL_SEARCH and is on; see
	// [ToolSearchMode]. An invalid value is an ErrInvalidOption.
	ToolSearch ToolSearchMode
	// MCPServers are MCP servers, by name, whose tools are offered as
	// mcp__<name>__<tool> (see package github.com/agentloop/agentloop/mcp).
	// They override same-named servers of the project's .mcp.json. Each
	// configuration is checked when the session starts: one without a
	// command (stdio) or url (http, sse) is an ErrInvalidOption.
	MCPServers map[string]MCPServerConfig
	// MCPConnector connects the MCP servers; set it to mcp.Connector{} of
	// package github.com/agentloop/agentloop/mcp (the core does not import
	// the MCP SDK). When it is nil and servers are configured, the servers
	// are reported failed and a diagnostic says why.
	MCPConnector MCPConnector
	// StrictMCPConfig uses only MCPServers: the project's .mcp.json is
	// not read.
	StrictMCPConfig bool
	// MCPStartTimeout bounds the start of each MCP server (they start
	// concurrently); zero means $MCP_TIMEOUT (milliseconds), else 30s.
	MCPStartTimeout time.Duration
	// Plugins are local plugins to load: their commands, agents, skills,
	// hooks and MCP servers join the session's, namespaced by the
	// plugin's name (see [PluginConfig]). A plugin that cannot be loaded
	// (no such directory, a malformed manifest) is an ErrInvalidOption.
	Plugins []PluginConfig
	// AllowedTools are rules for calls that run without asking, such as
	// "Bash" or "Write"; DisallowedTools are removed from the model's
	// tool list altogether, in every subagent too (a name with a rule
	// specifier, "Bash(rm:*)", is a deny rule instead).
	AllowedTools    []string
	DisallowedTools []string
	// PermissionMode defaults to the settings' defaultMode, else
	// PermissionDefault. bypassPermissions as root needs IS_SANDBOX=1
	// ([ErrBypassAsRoot]).
	PermissionMode PermissionMode
	// CanUseTool is asked about calls that no rule, mode or hook decided.
	// Nil means nobody can be asked: such calls are denied at once, as in
	// print mode.
	CanUseTool CanUseTool
	// PermissionPromptTool names an MCP tool (mcp__server__tool) that
	// is asked, in place of CanUseTool, about calls that no rule, mode or
	// hook decided (the CLI's --permission-prompt-tool). It is called
	// with {tool_name, input, tool_use_id} and must answer with one text
	// block holding a permission answer as JSON:
	// {"behavior":"allow","updatedInput":{...}} or
	// {"behavior":"deny","message":"..."}. A missing tool, a failing call
	// or another answer denies the call with a message that says why.
	// Setting both this and CanUseTool is an error.
	PermissionPromptTool string

	// Hooks are Go callbacks for the loop's events, by event, run
	// together with the command hooks of the settings files.
	Hooks map[hooks.Event][]hooks.Matcher
	// IncludeHookEvents adds system/hook_started and system/hook_response
	// messages to the stream.
	IncludeHookEvents bool
	// ForwardSubagentText also shows a subagent's text and thinking in
	// the stream (assistant messages with ParentToolUseID set), not only
	// its tool calls and their results; the reference's
	// forwardSubagentText. Either way the parent model gets the
	// subagent's final text as the Agent tool's result.
	ForwardSubagentText bool
	// SettingSources selects the settings files to load: user
	// (~/.claude/settings.json), project (.claude/settings.json) and local
	// (.claude/settings.local.json). Nil loads all three, as the reference
	// CLI does; an empty non-nil slice loads none. The managed policy and
	// Settings always load.
	//
	// The same sources select the CLAUDE.md instruction files, sent to the
	// model in the first user message of each conversation (subagents'
	// too): user ~/.claude/CLAUDE.md; project CLAUDE.md and
	// .claude/CLAUDE.md in the working directory and each parent up to the
	// repository root or the home directory; local CLAUDE.local.md in
	// those directories. @path imports in them are followed. The settings'
	// claudeMdExcludes (glob patterns of absolute paths) leave files out.
	// A file or import that cannot be used is reported as a DiagMemory
	// diagnostic, never an error.
	SettingSources []settings.SettingSource
	// ConfineProjectConfig runs what the project and local settings
	// files start inside the session's sandbox, for hosts whose working
	// directories belong to someone else (agentloop serve sets it when
	// its operator loads those sources): their command hooks are judged
	// as Bash commands (a deny rule that covers the command refuses the
	// hook) and then run sandboxed, like the Bash tool's commands, in the
	// current permission mode (plan mode: read-only); the servers of the
	// working directory's .mcp.json and of project settings are not
	// started (reported). Where the kernel cannot sandbox, those hooks
	// do not run (reported). Hooks of the user's and managed settings,
	// of Settings and of plugins run as usual.
	ConfineProjectConfig bool
	// Skills filters the skills offered to the model (listed, and
	// loadable by the Skill tool): nil offers every skill found; a list
	// offers those named, each also granted as a Skill(name) allow rule;
	// []string{AllSkills} offers all and allows Skill; an empty non-nil
	// list offers none. A user's "/name" prompt loads any skill found,
	// listed or not. Names take no parentheses, commas, "*", backslashes,
	// control characters or leading slash.
	Skills []string
	// Sandbox confines Bash commands with the kernel; it is merged into
	// the inline settings (see SandboxSettings). Nil leaves the sandbox
	// to the settings files, and without a sandbox setting there Bash
	// commands run in the default sandbox where the kernel supports it;
	// a non-nil Sandbox with Enabled false turns it off.
	Sandbox *SandboxSettings
	// Settings is a further settings file, or inline JSON starting with
	// "{", like the CLI's --settings.
	Settings string

	// MaxTurns ends the run with error_max_turns after this many model
	// replies that asked for tools; 0 means no limit. Subagents count
	// their own turns, and never get more than this.
	MaxTurns int
	// MaxBudgetUSD ends the run with error_max_budget_usd once its cost
	// reaches this amount; 0 means no limit. The cost is the whole
	// session's, subagents included. The check runs after each reply and
	// before each request of every loop, so a run overshoots by at most
	// one reply.
	MaxBudgetUSD float64
	// ModelPricing sets the price of models, by model id, alias or
	// family (claude-sonnet-4-5 covers its dated, Bedrock and Vertex
	// ids), replacing the built-in table's list price (costBasis
	// "managed" in modelUsage). It is merged over the modelPricing
	// setting, entry by entry. A model priced neither here, nor there,
	// nor in the table costs 0, is flagged costUnknown in modelUsage and
	// gets a diagnostic (DiagPricing) once per session. See
	// docs/providers.md.
	ModelPricing map[string]pricing.Rates
	// Effort is low, medium, high, xhigh or max ([Efforts]); empty leaves
	// it to the API.
	Effort string
	// MaxTokens caps each reply; 0 means the model's maximum.
	MaxTokens int
	// ContextManagement, when set, has the API clear old tool results or
	// thinking on its side (see [ContextManagement]). Nil: off.
	ContextManagement *ContextManagement
	// AutoCompactWindow is the context window, in tokens, that automatic
	// compaction keeps the conversation within: before a request whose
	// input would pass the window less the output reserved for a summary
	// and a buffer, the older part of the conversation is replaced by a
	// summary the model writes, the latest exchanges kept as they are.
	// 0 takes the settings' autoCompactWindow, else the model's window.
	// DisableAutoCompact turns automatic compaction off, as the settings'
	// autoCompactEnabled: false does. A prompt "/compact [instructions]"
	// compacts either way; "/clear" starts the conversation afresh.
	AutoCompactWindow  int64
	DisableAutoCompact bool
	// Thinking configures extended thinking, independently of Effort. Nil
	// means the model's default: adaptive thinking where the model
	// supports it. MaxThinkingTokens > 0 is a shorthand for thinking
	// enabled with that budget.
	Thinking          *ThinkingConfig
	MaxThinkingTokens int

	// OutputFormat, when set, makes the run end with structured output
	// that matches its schema; see [OutputFormat].
	OutputFormat *OutputFormat
	// MaxStructuredOutputRetries bounds the failed attempts at structured
	// output before the run ends in error_max_structured_output_retries;
	// 0 means 5.
	MaxStructuredOutputRetries int

	// Betas are beta features to ask the API for, sent in the
	// anthropic-beta header of every request by the built-in provider
	// (other providers get them in model.Request.Betas) and listed in
	// the init message. Values are passed through unchecked: the API
	// judges them.
	Betas []string
	// TaskBudget, when set, tells the model the token budget of the whole
	// task (output_config.task_budget, beta task-budgets-2026-03-13).
	TaskBudget *TaskBudget

	// IncludePartialMessages adds the raw stream events of each reply.
	IncludePartialMessages bool

	// Agents are the subagents the model may delegate to through the
	// Agent tool, by name (its subagent_type). A general-purpose agent
	// exists unless one of these takes its name.
	Agents map[string]AgentDefinition

	// Agent runs the main loop as this named agent, one of Agents, the
	// .claude/agents files or general-purpose: its
	// prompt takes the place of agentloop's, and its tools, disallowed
	// tools, model, effort, permission mode and turn limit apply to the
	// main loop wherever the options leave them unset. Its InitialPrompt
	// is the first prompt when Query is given none. An unknown name is
	// an ErrInvalidOption.
	Agent string

	// AskUser answers the model's questions (the AskUserQuestion tool,
	// offered by default when this is set). Nil means nobody is there to
	// ask, as in print mode.
	AskUser tool.AskUserFunc

	// ToolHost, when set, is where the built-in tools reach text files
	// (Read, Edit, Write) and run foreground Bash commands instead of the
	// local machine: an editor's unsaved buffers and its terminal (package
	// acp sets it from the editor's capabilities). Permission checks, path
	// confinement and the sandbox decide each call first, as without it;
	// see [tool.Host]. Nil means the local machine.
	ToolHost *tool.Host

	// Provider is the model provider; nil means the Anthropic Messages
	// API configured from the environment.
	Provider model.Provider
	// API tunes the built-in provider's timeouts and retries (see
	// [APIOptions]); nil keeps the defaults. Ignored, with a diagnostic,
	// when Provider is set.
	API *APIOptions
	// SessionID names the session; empty means a new random id. With
	// Resume or Continue it is only allowed together with ForkSession.
	SessionID string
	// Resume continues the session with this id: its history is sent
	// again, its cost carries on, and new messages are appended to its
	// transcript. Continue resumes the most recent session of Cwd (a new
	// session when there is none). ForkSession, with either, copies the
	// session to a new id first, leaving the original as it was.
	Resume      string
	Continue    bool
	ForkSession bool
	// ResumeSessionAt, with Resume, keeps the resumed conversation only up
	// to and including the transcript entry with this uuid; the later
	// entries are left out of the history (the transcript file keeps
	// them, and new entries branch off that entry). An entry the
	// session does not have is an ErrInvalidOption. ResumeDropsTurn, with
	// it, is the uuid of a prompt: the run ends at once in
	// error_during_execution ("Resume rejected by --resume-drops-turn:
	// …") unless everything left out belongs to that prompt's turn.
	ResumeSessionAt string
	ResumeDropsTurn string
	// Title, if set, names the session: a custom-title entry is appended
	// to its transcript when the session opens (what session.Rename
	// writes, and what session.List reports as CustomTitle), and a
	// system message with subtype "session_title_changed" and member
	// "title" is yielded once, after the first system/init message of
	// the session. With NoSessionPersistence only the message is. The
	// entry goes to the local transcript only, not to SessionStore.
	Title string
	// NoSessionPersistence turns off the transcript, which is otherwise
	// written under ConfigDir/projects/ (default: $CLAUDE_CONFIG_DIR or
	// ~/.claude), where agentloop and the reference CLI can resume it.
	NoSessionPersistence bool
	ConfigDir            string
	// SessionStore, when set, receives a copy of every transcript entry
	// after it is written locally, so that another host with the same
	// store can resume the session. A copy that fails after retries is
	// reported as system/mirror_error; the local transcript keeps it.
	SessionStore sessions.Store
	// SessionStoreLeaseTTL is how long this host's claim on the session
	// in SessionStore (see session.Lease) holds without renewal; it is
	// renewed every third of it while the session is open. 0 means
	// session.DefaultLeaseTTL (a minute). A shorter TTL lets another host
	// take the session over sooner after this one died, for more
	// renewals; keep it well above the hosts' clock skew. Negative is an
	// ErrInvalidOption.
	SessionStoreLeaseTTL time.Duration
	// EnableFileCheckpointing saves the prior state of each file Write,
	// Edit or NotebookEdit changes, once per prompt, so that
	// Client.RewindFiles can put the files back as they were before a
	// prompt. The variable
	// CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=true also turns it on. It
	// cannot be combined with SessionStore (ErrInvalidOption).
	EnableFileCheckpointing bool

	// Env is added to the environment of the processes the session starts
	// for the model (Bash commands, background shells, command hooks),
	// over the process environment and the settings files' env.
	Env map[string]string
	// ExposeCredentials passes agentloop's own API credentials
	// (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN,
	// ANTHROPIC_CUSTOM_HEADERS) on to those processes. By default they are
	// removed: the model chooses what those processes run.
	ExposeCredentials bool

	// Logger is the diagnostics log: everything the session accepted but
	// does not honour, and every problem it worked around, is logged here
	// at warning level (and also yielded as a system/informational
	// message; see [Diagnostic]). Nil logs nothing.
	Logger *slog.Logger

	// Observer, when set, is told of what the session does as spans: one
	// per prompt run, turn, model call, tool call, hook event, compaction
	// and subagent (see package observe, and agentloop/otel for
	// OpenTelemetry). Nil observes nothing, at no cost.
	Observer observe.Observer
}

// ErrInvalidOption reports an option value that cannot be used. The error
// also wraps its cause where there is one: [ErrUnknownValue] for a value
// outside a vocabulary, a *settings.Error for a malformed settings file.
var ErrInvalidOption = assemble.ErrInvalidOption

// ThinkingConfig configures extended thinking.
type ThinkingConfig struct {
	// Type is ThinkingAdaptive (the model decides how much to think),
	// ThinkingEnabled (with BudgetTokens) or ThinkingDisabled.
	Type         string
	BudgetTokens int
	// Display is ThinkingSummarized or ThinkingOmitted: whether thinking
	// text comes back in the stream. Empty leaves it to the API.
	Display string
}
