package conversation

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop/internal/diag"
)

// The diagnostics channel.
//
// Whatever agentloop accepts but does not honour — a settings key it
// ignores, a hook it cannot run, a rule that can never match, a tool name
// it does not know — and whatever it works around at run time becomes a
// Diagnostic. Each one is written to Options.Logger (the diagnostics log)
// at warning level and yielded in the stream as a system/informational
// message with level "warning" and the diagnostic's tag, the shape the
// reference CLI uses for warnings meant for the user. Nothing is dropped
// silently: a diagnostic found while the session is assembled is yielded
// right after the first system/init message of the session; one found
// later is yielded at the next point the loop emits messages.

// Diagnostic tags, stable strings a host can switch on.
const (
	DiagSettings     = "settings_ignored"    // a settings key or value is not honoured
	DiagHook         = "hook_ignored"        // a configured hook never runs
	DiagHookFailed   = "hook_failed"         // a hook ran and failed; its answer was treated as empty
	DiagHookMessage  = "hook_system_message" // a hook's systemMessage for the user
	DiagRule         = "permission_rule"     // a permission rule can never match
	DiagTool         = "unknown_tool"        // a tool name that names no tool
	DiagOption       = "option_ignored"      // an option is not honoured in this configuration
	DiagTranscript   = "transcript_repaired" // a damaged transcript was read around
	DiagSandbox      = "sandbox"             // the sandbox cannot do what the settings ask
	DiagSessionStore = "session_store"       // copies to Options.SessionStore were not made when the session closed
	DiagMemory       = "memory_file"         // a CLAUDE.md file or @import was left out (unreadable, not text, missing, cyclic, too deep)
	DiagProjectFile  = "project_file"        // a skill, command or agent file was left out or is partly not honoured
	DiagAgent        = "agent_ignored"       // an agent definition field is not honoured
	DiagMCP          = "mcp_server"          // an MCP server is not started or failed to start
	DiagPlugin       = "plugin"              // a plugin's component (hooks, MCP servers, a manifest field) is left out or not honoured
	DiagPricing      = "pricing"             // a model has no price: its calls are counted at $0 (providers.go)

	// DiagHookCallbackFailed: a host's hook callback failed (a Go callback
	// returned a *HookCallbackError, as the CLI's bridge to an SDK host
	// does); its answer was treated as empty. The reference CLI's tag.
	DiagHookCallbackFailed = "hook_callback_failed"

	// DiagWritesLost tags the log record of a transcript write that
	// failed. In the stream that loss is the system/session_writes_lost
	// message (and the result's session_writes_lost field), not an
	// informational one, so DiagnosticOf never returns this tag.
	DiagWritesLost = "session_writes_lost"
)

// Diagnostic is one thing agentloop accepted but does not honour, or a
// problem it worked around: its Tag (a Diag* constant) and its Text.
type Diagnostic = diag.Diagnostic

// diagnostics is a session's sink (internal/diag).
type diagnostics = diag.Sink

// settingsKeysRead are the top-level settings keys that agentloop reads
// from settings.Settings.Extra; every other key there is reported as not
// honoured. A producer that starts reading a key from Extra adds it here
// (TestSettingsKeysReadListed finds the keys the package's code reads).
var settingsKeysRead = []string{
	"$schema", // editors' schema reference, no setting
	"agent",   // agent_main.go
	"claudeMdExcludes",
	"enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers", // mcp_glue.go

	"apiKeyHelper", "modelPricing", // providers.go
	"autoMode", // classifier_rules.go

	// The managed policy's own keys (managed_policy.go). Package settings
	// reads them into Settings.Managed, so they never reach Extra; they
	// are listed so that no list of keys agentloop reads misses them.
	"allowManagedPermissionRulesOnly", "allowManagedMcpServersOnly", "allowedMcpServers",
	"deniedMcpServers", "disableSkillShellExecution", "strictPluginOnlyCustomization",
	"availableModels", "availableModelsMatch", "deniedModels",
}

// unhonouredSettingsKeys is the diagnostic text naming the top-level
// settings keys in extra that agentloop does not read, or "" when there
// are none. The names are sorted, so the text is stable.
func unhonouredSettingsKeys(extra map[string]json.RawMessage) string {
	var keys []string
	for k := range extra {
		if !slices.Contains(settingsKeysRead, k) {
			keys = append(keys, strconv.Quote(k))
		}
	}
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return "settings key " + keys[0] + " is not honoured by agentloop; ignored"
	}
	slices.Sort(keys)
	return "settings keys " + strings.Join(keys, ", ") + " are not honoured by agentloop; ignored"
}

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
