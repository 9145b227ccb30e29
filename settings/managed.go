package settings

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Managed holds the settings that only an administrator's managed policy
// (PolicySettings) may set. They are read from the policy file alone: the
// same keys in any other file are ignored, with a warning in
// Settings.Warnings, so that a user or a repository can neither relax nor
// pretend to satisfy a policy. A malformed value in the policy file fails
// Load, as any malformed field does.
//
// Package settings only reads and matches these keys; the session
// (package agentloop) enforces them, or refuses to start when it cannot.
type Managed struct {
	// File is the policy file that set any of these keys ("" when none
	// did).
	File string
	// Keys are the managed-only keys the policy file sets, in file order.
	Keys []string

	// HooksOnly is allowManagedHooksOnly: Settings.Hooks already holds
	// only the policy's hooks; the session also drops the hooks of
	// plugins.
	HooksOnly bool
	// PermissionRulesOnly is allowManagedPermissionRulesOnly: only the
	// policy's permission rules grant anything.
	PermissionRulesOnly bool
	// MCPServersOnly is allowManagedMcpServersOnly: only the policy's
	// allowedMcpServers decides which MCP servers may run; without one,
	// none may.
	MCPServersOnly bool
	// AllowedMCPServers is allowedMcpServers: nil when unset (no
	// allowlist), an empty non-nil slice when it blocks every server.
	AllowedMCPServers []MCPServerEntry
	// DeniedMCPServers is deniedMcpServers; a server one of them matches
	// never runs, whatever the allowlist says.
	DeniedMCPServers []MCPServerEntry
	// DisableSkillShellExecution is disableSkillShellExecution.
	DisableSkillShellExecution bool
	// StrictPluginOnly is strictPluginOnlyCustomization: the surfaces
	// ("skills", "agents", "hooks", "mcp") on which only plugins and the
	// policy may add customizations. true in the file means all four.
	StrictPluginOnly []string
	// AvailableModels is availableModels: nil when unset, otherwise the
	// only models a session may use (an empty list allows none).
	// AvailableModelsMatch is availableModelsMatch, "prefix" (the
	// default) or "exact"; family aliases (opus, sonnet, haiku) match a
	// family either way.
	AvailableModels      []string
	AvailableModelsMatch string
	// DeniedModels is deniedModels: models no session may use.
	DeniedModels []string
	// HTTPHooks holds allowedHttpHookUrls and httpHookAllowedEnvVars as
	// written, by key, for package hooks (hooks.Config.Policy), which
	// reads and checks them; nil when the policy sets neither.
	HTTPHooks map[string]json.RawMessage
	// Unsupported are the managed-only keys the policy sets that restrict
	// what a session may do in ways agentloop does not implement
	// (forceLoginMethod, …). A session must refuse to start while any is
	// set.
	Unsupported []string
}

// MCPServerEntry is one entry of allowedMcpServers or deniedMcpServers.
// Exactly one field is set.
type MCPServerEntry struct {
	// ServerName matches a server by its configured name.
	ServerName string `json:"serverName,omitempty"`
	// ServerCommand matches a stdio server by its command and arguments,
	// exactly.
	ServerCommand []string `json:"serverCommand,omitempty"`
	// ServerURL matches an http or sse server by its URL; "*" stands for
	// any run of characters.
	ServerURL string `json:"serverUrl,omitempty"`
}

// Surfaces strictPluginOnlyCustomization can lock.
const (
	SurfaceSkills = "skills"
	SurfaceAgents = "agents"
	SurfaceHooks  = "hooks"
	SurfaceMCP    = "mcp"
)

// PluginOnlySurfaces are the surfaces strictPluginOnlyCustomization knows,
// all of which true selects.
var PluginOnlySurfaces = []string{SurfaceSkills, SurfaceAgents, SurfaceHooks, SurfaceMCP}

// managedKeys are the top-level keys only the managed policy may set, and
// that Managed holds. allowManagedHooksOnly is one too, but merge applies
// it itself.
var managedKeys = []string{
	"allowManagedPermissionRulesOnly", "allowManagedMcpServersOnly",
	"allowedMcpServers", "deniedMcpServers", "disableSkillShellExecution",
	"strictPluginOnlyCustomization", "availableModels", "availableModelsMatch",
	"deniedModels", "allowedHttpHookUrls", "httpHookAllowedEnvVars",
}

// unsupportedManagedKeys are managed-only keys that restrict a session in
// ways agentloop does not implement: a policy that sets one is refused
// (Managed.Unsupported) rather than silently not applied.
var unsupportedManagedKeys = []string{
	"forceLoginMethod", "forceLoginOrgUUID", "forceLoginGatewayUrl", // agentloop has no login flow to force
	"strictKnownMarketplaces", "blockedMarketplaces", "allowedMarketplaces", // plugins load from paths, not marketplaces
	"allowedProviders",           // the API providers a session may use: not checked
	"disableSideloadFlags",       // which host-given customizations count as sideloaded: not defined here
	"policyHelper",               // a program that supplies more policy: never run
	"wslInheritsWindowsSettings", // the Windows policy a WSL session would inherit: never read
}

// ManagedKeys lists every top-level key that binds only from the managed
// policy and that Settings.Managed reports (set or unsupported).
func ManagedKeys() []string { return slices.Concat(managedKeys, unsupportedManagedKeys) }

// isManagedKey reports whether key binds only from the managed policy.
func isManagedKey(key string) bool {
	return slices.Contains(managedKeys, key) || slices.Contains(unsupportedManagedKeys, key)
}

// readManaged reads a managed-only key of the file: into l.managed when
// the file is the policy, else a warning that it is ignored.
func (l *layer) readManaged(c *checker, key string, raw json.RawMessage) {
	if l.source != PolicySettings {
		l.warnings = append(l.warnings, fmt.Sprintf(
			"%s: %s ignored: only the managed policy may set it", l.display, key))
		return
	}
	if l.managed == nil {
		l.managed = &Managed{File: l.display}
	}
	m := l.managed
	n := len(c.errs)
	switch key {
	case "allowManagedPermissionRulesOnly":
		m.PermissionRulesOnly, _ = c.boolean(key, raw)
	case "allowManagedMcpServersOnly":
		m.MCPServersOnly, _ = c.boolean(key, raw)
	case "disableSkillShellExecution":
		m.DisableSkillShellExecution, _ = c.boolean(key, raw)
	case "allowedMcpServers":
		m.AllowedMCPServers = readMCPEntries(c, key, raw)
	case "deniedMcpServers":
		m.DeniedMCPServers = readMCPEntries(c, key, raw)
	case "strictPluginOnlyCustomization":
		m.StrictPluginOnly = readSurfaces(c, key, raw)
	case "availableModels":
		m.AvailableModels = readModels(c, key, raw)
	case "deniedModels":
		m.DeniedModels = readModels(c, key, raw)
	case "availableModelsMatch":
		if v, ok := c.str(key, raw); ok {
			if v != "prefix" && v != "exact" {
				c.bad(key, "want \"prefix\" or \"exact\", got %q", v)
			}
			m.AvailableModelsMatch = v
		}
	case "allowedHttpHookUrls", "httpHookAllowedEnvVars":
		if m.HTTPHooks == nil {
			m.HTTPHooks = map[string]json.RawMessage{}
		}
		m.HTTPHooks[key] = raw
	default: // unsupportedManagedKeys
		if !isFalsy(raw) {
			m.Unsupported = append(m.Unsupported, key)
		}
	}
	if len(c.errs) == n {
		m.Keys = append(m.Keys, key)
	}
}

// isFalsy reports whether a value sets nothing: false, "", [] or {}.
func isFalsy(raw json.RawMessage) bool {
	switch strings.TrimSpace(string(raw)) {
	case "false", `""`, "[]", "{}":
		return true
	}
	return false
}

func readMCPEntries(c *checker, field string, raw json.RawMessage) []MCPServerEntry {
	items, ok := c.array(field, raw, "an array of server entries")
	if !ok {
		return nil
	}
	out := []MCPServerEntry{}
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		o := c.object(f, it)
		if o == nil {
			continue
		}
		var e MCPServerEntry
		set := 0
		for _, k := range o.keys {
			v := o.vals[k]
			switch k {
			case "serverName":
				if s, ok := c.str(f+"."+k, v); ok && strings.TrimSpace(s) != "" {
					e.ServerName = s
					set++
				} else if ok {
					c.bad(f+"."+k, "want a server name, got an empty string")
				}
			case "serverCommand":
				if cmd := c.strs(f+"."+k, v, nil); len(cmd) > 0 && cmd[0] != "" {
					e.ServerCommand = cmd
					set++
				} else {
					c.bad(f+"."+k, "want a command and its arguments, got none")
				}
			case "serverUrl":
				if s, ok := c.str(f+"."+k, v); ok && strings.TrimSpace(s) != "" {
					e.ServerURL = s
					set++
				} else if ok {
					c.bad(f+"."+k, "want a URL pattern, got an empty string")
				}
			default:
				c.bad(f+"."+k, "unknown field (want serverName, serverCommand or serverUrl)")
			}
		}
		if set != 1 {
			c.bad(f, "want exactly one of serverName, serverCommand and serverUrl")
			continue
		}
		out = append(out, e)
	}
	return out
}

func readSurfaces(c *checker, field string, raw json.RawMessage) []string {
	if kind(raw) == "boolean" {
		if b, _ := c.boolean(field, raw); b {
			return slices.Clone(PluginOnlySurfaces)
		}
		return nil
	}
	if kind(raw) != "array" {
		c.wrongType(field, "true or an array of surfaces", raw)
		return nil
	}
	out := []string{}
	for _, s := range c.strs(field, raw, func(s string) string {
		if !slices.Contains(PluginOnlySurfaces, s) {
			return fmt.Sprintf("unknown surface %q (want one of %s)", s, strings.Join(PluginOnlySurfaces, ", "))
		}
		return ""
	}) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func readModels(c *checker, field string, raw json.RawMessage) []string {
	list := c.strs(field, raw, func(s string) string {
		if strings.TrimSpace(s) == "" {
			return "want a model, got an empty string"
		}
		return ""
	})
	if list == nil {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, strings.ToLower(strings.TrimSpace(s)))
	}
	return out
}

// PluginOnly reports whether strictPluginOnlyCustomization locks surface.
func (m *Managed) PluginOnly(surface string) bool {
	return m != nil && slices.Contains(m.StrictPluginOnly, surface)
}

// MCPServer describes an MCP server for [Managed.MCPServerBlocked].
type MCPServer struct {
	Name    string
	Command []string // a stdio server's command then its arguments; nil for others
	URL     string   // an http or sse server's URL; "" for others
}

// MCPServerBlocked returns the managed key that stops the server from
// running — "deniedMcpServers", "allowedMcpServers" or
// "allowManagedMcpServersOnly" — or "" when it may run.
//
// A deniedMcpServers entry matches a server by name, by exact command (a
// stdio server) or by URL pattern (a remote one); deny wins over allow.
// When an allowlist is in force, a stdio server must match one of its
// serverCommand entries if it has any, a remote server one of its
// serverUrl entries if it has any, and otherwise the server's name must
// be listed. allowManagedMcpServersOnly without an allowlist blocks
// every server.
func (m *Managed) MCPServerBlocked(s MCPServer) string {
	if m == nil {
		return ""
	}
	for _, e := range m.DeniedMCPServers {
		if e.ServerName != "" && e.ServerName == s.Name ||
			e.ServerCommand != nil && s.Command != nil && slices.Equal(e.ServerCommand, s.Command) ||
			e.ServerURL != "" && s.URL != "" && URLPatternMatch(e.ServerURL, s.URL) {
			return "deniedMcpServers"
		}
	}
	if m.AllowedMCPServers == nil {
		if m.MCPServersOnly {
			return "allowManagedMcpServersOnly"
		}
		return ""
	}
	hasCmd := slices.ContainsFunc(m.AllowedMCPServers, func(e MCPServerEntry) bool { return e.ServerCommand != nil })
	hasURL := slices.ContainsFunc(m.AllowedMCPServers, func(e MCPServerEntry) bool { return e.ServerURL != "" })
	for _, e := range m.AllowedMCPServers {
		switch {
		case s.Command != nil && hasCmd:
			if e.ServerCommand != nil && slices.Equal(e.ServerCommand, s.Command) {
				return ""
			}
		case s.URL != "" && hasURL:
			if e.ServerURL != "" && URLPatternMatch(e.ServerURL, s.URL) {
				return ""
			}
		case e.ServerName != "" && e.ServerName == s.Name:
			return ""
		}
	}
	return "allowedMcpServers"
}

// URLPatternMatch reports whether url matches pattern, in which "*"
// stands for any run of characters (none included) and everything else
// must be equal.
func URLPatternMatch(pattern, url string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == url
	}
	if !strings.HasPrefix(url, parts[0]) {
		return false
	}
	url = url[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(url, p)
		if i < 0 {
			return false
		}
		url = url[i+len(p):]
	}
	return len(url) >= len(last) && strings.HasSuffix(url, last)
}

// modelFamilies are the aliases that stand for a whole model family in
// availableModels and deniedModels.
var modelFamilies = []string{"opus", "sonnet", "haiku"}

// ModelBlocked returns the managed key that forbids the model —
// "deniedModels" or "availableModels" — or "" when it may be used. model
// is a model id (aliases resolved by the caller); the lists' entries
// match it by family alias ("opus" matches every id of the claude-opus
// family), by prefix ending at a "-" boundary ("claude-opus-4" matches
// "claude-opus-4-1-20250805", not "claude-opus-40"), or exactly when
// availableModelsMatch is "exact" (deniedModels always matches by
// prefix: a deny is never narrower than written). Ids of cloud platforms
// ("us.anthropic.claude-…-v1:0") are compared from "claude-" on.
func (m *Managed) ModelBlocked(model string) string {
	if m == nil {
		return ""
	}
	id := canonicalModel(model)
	for _, e := range m.DeniedModels {
		if modelMatch(e, id, false) {
			return "deniedModels"
		}
	}
	if m.AvailableModels == nil {
		return ""
	}
	for _, e := range m.AvailableModels {
		if modelMatch(e, id, m.AvailableModelsMatch == "exact") {
			return ""
		}
	}
	return "availableModels"
}

// canonicalModel lower-cases id and drops a cloud platform's prefix
// ("us.anthropic.", "anthropic.") and version suffix ("-v1:0", "@…").
func canonicalModel(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	if i := strings.Index(id, "claude-"); i > 0 {
		id = id[i:]
	}
	if i := strings.IndexAny(id, "@:"); i >= 0 {
		id = id[:i]
	}
	if i := strings.LastIndex(id, "-v"); i >= 0 && strings.Trim(id[i+2:], "0123456789") == "" && i+2 < len(id) {
		id = id[:i]
	}
	return id
}

// modelMatch reports whether the list entry e matches the canonical id.
func modelMatch(e, id string, exact bool) bool {
	if slices.Contains(modelFamilies, e) {
		return slices.Contains(strings.Split(id, "-"), e)
	}
	e = canonicalModel(e)
	if e == id {
		return true
	}
	if exact {
		return false
	}
	return strings.HasPrefix(id, e) && (strings.HasSuffix(e, "-") || id[len(e)] == '-')
}
