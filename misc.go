package agentloop

import (
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/internal/diag"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// ContextManagement asks the Messages API to edit the context on its side
// (its context_management field, sent with the context-management beta):
// old tool results or old thinking are cleared before the model reads the
// request, while the session's history and transcript stay whole. It is
// off unless Options.ContextManagement is set; the client-side handling of
// a full context stays the default and the fallback. Example, clearing all
// but the last three tool results once the input passes 100,000 tokens:
//
//	&agentloop.ContextManagement{Edits: []agentloop.ContextEdit{{
//		Type:    agentloop.EditClearToolUses,
//		Trigger: &agentloop.ContextAmount{Type: "input_tokens", Value: 100_000},
//		Keep:    &agentloop.ContextAmount{Type: "tool_uses", Value: 3},
//	}}}
type ContextManagement = model.ContextManagement

// ContextEdit is one edit of a [ContextManagement].
type ContextEdit = model.ContextEdit

// ContextAmount is a typed amount in a [ContextEdit].
type ContextAmount = model.ContextAmount

// Diagnostic tags, stable strings a host can switch on.
const (
	DiagSettings     = conversation.DiagSettings     // a settings key or value is not honoured
	DiagHook         = conversation.DiagHook         // a configured hook never runs
	DiagHookFailed   = conversation.DiagHookFailed   // a hook ran and failed; its answer was treated as empty
	DiagHookMessage  = conversation.DiagHookMessage  // a hook's systemMessage for the user
	DiagRule         = conversation.DiagRule         // a permission rule can never match
	DiagTool         = conversation.DiagTool         // a tool name that names no tool
	DiagOption       = conversation.DiagOption       // an option is not honoured in this configuration
	DiagTranscript   = conversation.DiagTranscript   // a damaged transcript was read around
	DiagSandbox      = conversation.DiagSandbox      // the sandbox cannot do what the settings ask
	DiagSessionStore = conversation.DiagSessionStore // copies to Options.SessionStore were not made when the session closed
	DiagMemory       = conversation.DiagMemory       // a CLAUDE.md file or @import was left out (unreadable, not text, missing, cyclic, too deep)
	DiagProjectFile  = conversation.DiagProjectFile  // a skill, command or agent file was left out or is partly not honoured
	DiagAgent        = conversation.DiagAgent        // an agent definition field is not honoured
	DiagMCP          = conversation.DiagMCP          // an MCP server is not started or failed to start
	DiagPlugin       = conversation.DiagPlugin       // a plugin's component (hooks, MCP servers, a manifest field) is left out or not honoured
	DiagPricing      = conversation.DiagPricing      // a model has no price: its calls are counted at $0

	// DiagHookCallbackFailed: a host's hook callback failed (a Go callback
	// returned a *HookCallbackError, as the CLI's bridge to an SDK host
	// does); its answer was treated as empty. The reference CLI's tag.
	DiagHookCallbackFailed = conversation.DiagHookCallbackFailed

	// DiagWritesLost tags the log record of a transcript write that
	// failed. In the stream that loss is the system/session_writes_lost
	// message (and the result's session_writes_lost field), not an
	// informational one, so DiagnosticOf never returns this tag.
	DiagWritesLost = conversation.DiagWritesLost
)

// Diagnostic is one thing agentloop accepted but does not honour, or a
// problem it worked around: its Tag (a Diag* constant) and its Text.
type Diagnostic = diag.Diagnostic

// DiagnosticMessage is the stream message that carries d for the session
// sessionID (the system/informational message at warning level that
// DiagnosticOf reads), for hosts that report their own problems in a
// session's stream.
func DiagnosticMessage(sessionID string, d Diagnostic) Message {
	return diag.Informational(sessionID, d)
}

// DiagnosticOf returns the diagnostic a stream message carries: a
// system/informational message at warning level. ok is false for every
// other message.
func DiagnosticOf(m Message) (d Diagnostic, ok bool) { return diag.Of(m) }

// MCP servers reach the session through three plain types of package tool,
// so that the core never imports the MCP SDK: a server's configuration, its
// status, and the connector (package agentloop/mcp's mcp.Connector) that
// turns configurations into ordinary tools.
type (
	// MCPServerConfig is one MCP server's configuration (see
	// [tool.MCPServerConfig]).
	MCPServerConfig = tool.MCPServerConfig
	// MCPServerStatus is one MCP server's state, as [Client.MCPStatus]
	// reports it.
	MCPServerStatus = tool.MCPServerStatus
	// MCPToolPolicy is the permission policy of one tool of an MCP
	// server (see [tool.MCPToolPolicy]).
	MCPToolPolicy = tool.MCPToolPolicy
	// MCPConnector connects MCP servers; mcp.Connector{} of package
	// github.com/agentloop/agentloop/mcp is the implementation.
	MCPConnector = tool.MCPConnector
)

// MCPClients is the session's live connections (see [tool.MCPClients]).
type MCPClients = tool.MCPClients

// ParseMCPConfig reads MCP server configurations in the reference's
// format, {"mcpServers": {"<name>": {...}}}, as in .mcp.json and the CLI's
// --mcp-config. A server's "timeout" is in milliseconds (values under 1000
// are ignored). An unknown type, a stdio server without a command or an
// http/sse server without a url is an error naming the server.
func ParseMCPConfig(data []byte) (map[string]MCPServerConfig, error) {
	return conversation.ParseMCPConfig(data)
}

// EnvModel names the variable that picks the model when Options.Model is
// empty; it wins over the settings' model key, as in the reference
// (Options.Model > ANTHROPIC_MODEL > settings model > the default). The
// settings' env may set it, any file included: a model name redirects
// nothing.
const EnvModel = conversation.EnvModel

// AllSkills, alone in Options.Skills, offers every skill found and allows
// the Skill tool, as the reference's skills: "all" does.
const AllSkills = conversation.AllSkills

// SubtypeSessionTitleChanged is the subtype of the system message that
// announces the session's title (Options.Title), with the member "title".
const SubtypeSessionTitleChanged = conversation.SubtypeSessionTitleChanged

// SubtypeCommandsChanged is the subtype of the system message that gives
// the session's whole list of slash commands (member "commands", as
// [Client.SupportedCommands] lists them) after it changed (/reload-skills
// found skills or commands added or removed): a client replaces the list
// it cached.
const SubtypeCommandsChanged = conversation.SubtypeCommandsChanged

// The edit types.
const (
	EditClearToolUses = model.EditClearToolUses
	EditClearThinking = model.EditClearThinking
)
