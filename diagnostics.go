package agentloop

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentloop/agentloop/message"
	"github.com/google/uuid"
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
// problem it worked around.
type Diagnostic struct {
	// Tag classifies it (the Diag* constants).
	Tag string
	// Text says what was wrong and where, for a person.
	Text string
}

// diagnostics collects a session's diagnostics. Safe for concurrent use.
type diagnostics struct {
	logger    *slog.Logger // nil: none
	sessionID string
	notify    func(message.Message) // set once the engine exists: runtime diagnostics go through it

	mu      sync.Mutex
	lead    []func(sessionID string) message.Message // yielded by the next take, before the diagnostics
	pending []Diagnostic                             // found before the first init message, not yet yielded
	all     []Diagnostic
}

// add records d: it is logged now and yielded later.
func (g *diagnostics) add(tag, text string) {
	if g == nil || text == "" {
		return
	}
	d := Diagnostic{Tag: tag, Text: text}
	g.mu.Lock()
	id := g.sessionID // /clear changes it (clear_session.go)
	g.all = append(g.all, d)
	notify := g.notify
	if notify == nil {
		g.pending = append(g.pending, d)
	}
	g.mu.Unlock()
	if g.logger != nil {
		g.logger.LogAttrs(context.Background(), slog.LevelWarn, text,
			slog.String("tag", tag), slog.String("session_id", id))
	}
	if notify != nil {
		notify(informational(id, d))
	}
}

// log writes a record to the diagnostics log only: for a problem the
// stream reports in a message of its own (a sandbox notification, a
// session_writes_lost message), which is not yielded again as a
// diagnostic.
func (g *diagnostics) log(tag, text string, attrs ...slog.Attr) {
	if g == nil || g.logger == nil || text == "" {
		return
	}
	g.mu.Lock()
	id := g.sessionID
	g.mu.Unlock()
	attrs = append([]slog.Attr{slog.String("tag", tag), slog.String("session_id", id)}, attrs...)
	g.logger.LogAttrs(context.Background(), slog.LevelWarn, text, attrs...)
}

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

// addAll records each text under tag.
func (g *diagnostics) addAll(tag string, texts []string) {
	for _, t := range texts {
		g.add(tag, t)
	}
}

// announce queues a message for the next take, which yields it (once)
// before the diagnostics; build makes it with the session id current
// then.
func (g *diagnostics) announce(build func(sessionID string) message.Message) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lead = append(g.lead, build)
}

// take returns the announced messages and the diagnostics not yet
// yielded, as messages, and routes later diagnostics through notify (nil:
// keep queueing them).
func (g *diagnostics) take(notify func(message.Message)) []message.Message {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []message.Message
	for _, build := range g.lead {
		out = append(out, build(g.sessionID))
	}
	g.lead = nil
	for _, d := range g.pending {
		out = append(out, informational(g.sessionID, d))
	}
	g.pending = nil
	if notify != nil {
		g.notify = notify
	}
	return out
}

// list returns every diagnostic recorded so far.
func (g *diagnostics) list() []Diagnostic {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Diagnostic(nil), g.all...)
}

// informational is the system/informational message of d.
func informational(sessionID string, d Diagnostic) *message.System {
	content, _ := json.Marshal(d.Text)
	tag, _ := json.Marshal(d.Tag)
	return &message.System{Subtype: "informational", SessionID: sessionID, UUID: uuid.NewString(),
		Data: map[string]json.RawMessage{"content": content, "level": json.RawMessage(`"warning"`), "tag": tag}}
}

// DiagnosticMessage is the stream message that carries d for the session
// sessionID (the system/informational message at warning level that
// DiagnosticOf reads), for hosts that report their own problems in a
// session's stream.
func DiagnosticMessage(sessionID string, d Diagnostic) Message {
	return informational(sessionID, d)
}

// DiagnosticOf returns the diagnostic a stream message carries: a
// system/informational message at warning level. ok is false for every
// other message.
func DiagnosticOf(m Message) (d Diagnostic, ok bool) {
	s, isSys := m.(*message.System)
	if !isSys || s.Subtype != "informational" || string(s.Data["level"]) != `"warning"` {
		return Diagnostic{}, false
	}
	_ = json.Unmarshal(s.Data["content"], &d.Text)
	_ = json.Unmarshal(s.Data["tag"], &d.Tag)
	return d, true
}
