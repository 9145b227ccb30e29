package conversation

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/agentloop/agentloop/internal/projectfiles"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
)

// The managed policy's own keys (settings.Managed): what an administrator
// restricts, enforced here or refused. Nothing in this file only warns
// about a policy key the policy file sets: each key is applied, or the
// session does not start.
//
//   - allowManagedPermissionRulesOnly: allow rules come from the policy
//     alone. The other files' allow rules, Options.AllowedTools, the
//     Skill rules of Options.Skills and the allowed-tools of skills and
//     slash commands grant nothing (reported once). Deny and ask rules
//     from elsewhere still apply: they can only narrow what the policy
//     allows.
//   - allowManagedHooksOnly: package settings keeps only the policy's
//     settings hooks; the plugins' hooks are dropped here. Skill and agent
//     files carry no hooks in agentloop. The host program's callbacks
//     (Options.Hooks) still run: they are code of the program embedding
//     agentloop, not configuration, and may be its own guards.
//   - allowedMcpServers, deniedMcpServers, allowManagedMcpServersOnly:
//     every MCP server, whatever configured it, is matched before it
//     starts; a blocked one is never started, is reported (DiagMCP) and
//     shows in MCPStatus as failed, blocked by the key.
//   - disableSkillShellExecution: agentloop never runs the shell blocks
//     (!`command`) of skills and commands; with the key set, each is
//     replaced by a note that the policy forbids it, so that the model is
//     not led to run it through Bash either.
//   - strictPluginOnlyCustomization: skills and commands, agents, settings
//     hooks and MCP servers from anywhere but plugins, the policy and the
//     host program's in-process code are left out, surface by surface.
//   - availableModels, availableModelsMatch, deniedModels: the session's
//     model and fallback models are checked at start (refused with
//     ErrManagedPolicyDenied), a subagent's model when it starts (the
//     Agent call fails), Client.SetModel and a slash command's model when
//     they switch.
//   - keys agentloop cannot apply (settings.Managed.Unsupported: the forced
//     login keys, allowedProviders, disableSideloadFlags, policyHelper,
//     wslInheritsWindowsSettings, and the marketplace keys when plugins are
//     configured) refuse the session with ErrManagedPolicyUnsupported.

// ErrManagedPolicyUnsupported is matched (errors.Is) by the error of a
// session that does not start because the managed policy sets a key
// agentloop cannot enforce; the error names the key.
var ErrManagedPolicyUnsupported = errors.New("agentloop: managed policy setting cannot be enforced")

// ErrManagedPolicyDenied is matched (errors.Is) by the error of what the
// managed policy forbids: a session, subagent or model switch to a model
// outside availableModels or in deniedModels. The error names the model
// and the key.
var ErrManagedPolicyDenied = errors.New("agentloop: forbidden by the managed policy")

// testManagedPath, when set, is the managed-policy file every session
// reads instead of settings.DefaultManagedPath (a test seam; see
// managed_policy_export_test.go).
var testManagedPath atomic.Pointer[string]

// managedPath is the managed-policy file for settings.Options.ManagedPath:
// "" (the platform's default) outside tests.
func managedPath() string {
	if p := testManagedPath.Load(); p != nil {
		return *p
	}
	return ""
}

// marketplaceKeys restrict where plugins come from. agentloop loads
// plugins from paths (Options.Plugins), never from a marketplace, so the
// keys are refused only when plugins are configured.
var marketplaceKeys = []string{"strictKnownMarketplaces", "blockedMarketplaces", "allowedMarketplaces"}

// noPolicy is the managed policy of a session without one (most): shared,
// read only.
var noPolicy settings.Managed

// managed is the session's managed policy (never nil; read only).
func (s *Session) managed() *settings.Managed {
	if s.policy == nil {
		return &noPolicy
	}
	return s.policy
}

// applyManagedPolicy checks the policy keys of st and applies those that
// act on the settings themselves. It runs right after the settings load.
func (s *Session) applyManagedPolicy(st *settings.Settings) error {
	if !reflect.ValueOf(st.Managed).IsZero() {
		p := st.Managed
		s.policy = &p
	}
	m := s.managed()
	for _, k := range m.Unsupported {
		if slices.Contains(marketplaceKeys, k) && len(s.opts.Plugins) == 0 {
			continue // no plugin to restrict
		}
		return fmt.Errorf("%w: %s sets %s, which agentloop cannot enforce; the session does not start",
			ErrManagedPolicyUnsupported, m.File, k)
	}
	if m.PermissionRulesOnly {
		var dropped []string
		keep := func(rules []settings.Rule) []settings.Rule {
			return slices.DeleteFunc(rules, func(r settings.Rule) bool {
				if r.Source == settings.PolicySettings {
					return false
				}
				dropped = append(dropped, fmt.Sprintf("%s (%s)", r.Value, r.Source))
				return true
			})
		}
		st.Permissions.Allow = keep(st.Permissions.Allow)
		for _, r := range s.opts.AllowedTools {
			dropped = append(dropped, fmt.Sprintf("%s (Options.AllowedTools)", r))
		}
		s.opts.AllowedTools = nil
		if len(dropped) > 0 {
			s.diag.Add(DiagSettings, fmt.Sprintf("allowManagedPermissionRulesOnly (managed policy): allow rules from outside the policy are ignored: %s",
				strings.Join(dropped, ", ")))
		}
	}
	if m.PluginOnly(settings.SurfaceHooks) {
		var dropped int
		for ev, ms := range st.Hooks {
			kept := slices.DeleteFunc(slices.Clone(ms), func(h settings.HookMatcher) bool {
				return h.Source != settings.PolicySettings
			})
			dropped += len(ms) - len(kept)
			if len(kept) == 0 {
				delete(st.Hooks, ev)
			} else {
				st.Hooks[ev] = kept
			}
		}
		if dropped > 0 {
			s.diag.Add(DiagHook, fmt.Sprintf("strictPluginOnlyCustomization (managed policy): %d hook matcher(s) of settings files other than the policy are ignored", dropped))
		}
	}
	return nil
}

// policyGrantsOff reports, once per what, that allow rules of what are
// not granted under allowManagedPermissionRulesOnly, and whether that is
// the case.
func (s *Session) policyGrantsOff(what string) bool {
	if !s.managed().PermissionRulesOnly {
		return false
	}
	if _, done := s.run().policyNoted.LoadOrStore("grant:"+what, struct{}{}); !done {
		s.diag.Add(DiagSettings, fmt.Sprintf("allowManagedPermissionRulesOnly (managed policy): %s grants no permission", what))
	}
	return true
}

// modelAllowed returns an error wrapping ErrManagedPolicyDenied when the
// policy forbids model (an id or alias); what says who asked for it.
func (s *Session) modelAllowed(model, what string) error {
	id := pricing.Resolve(model)
	if key := s.managed().ModelBlocked(id); key != "" {
		return fmt.Errorf("%w: %s %q is not allowed by %s (%s)", ErrManagedPolicyDenied, what, id, key, s.managed().File)
	}
	return nil
}

// helperModelAllowed is modelAllowed for the requests agentloop makes on
// its own (prompt hooks, the auto-mode classifier): as in the reference,
// availableModels does not bind them, deniedModels does.
func (s *Session) helperModelAllowed(model, what string) error {
	id := pricing.Resolve(model)
	if s.managed().ModelBlocked(id) == "deniedModels" {
		return fmt.Errorf("%w: %s %q is not allowed by deniedModels (%s)", ErrManagedPolicyDenied, what, id, s.managed().File)
	}
	return nil
}

// checkSessionModels refuses a session whose model or fallback models the
// policy forbids.
func (s *Session) checkSessionModels() error {
	if err := s.modelAllowed(s.model, "model"); err != nil {
		return err
	}
	for _, f := range s.opts.FallbackModels {
		if err := s.modelAllowed(f, "fallback model"); err != nil {
			return err
		}
	}
	return nil
}

// filterManagedMCP removes from servers those the policy does not let
// run, each reported, and returns their status (failed, with the key
// that blocked it), sorted by name.
func (s *Session) filterManagedMCP(servers map[string]MCPServerConfig) []MCPServerStatus {
	m := s.managed()
	var blocked []MCPServerStatus
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		c := servers[name]
		sdk := c.Type == tool.MCPSDK || (c.Type == "" && c.Server != nil)
		key := ""
		if m.PluginOnly(settings.SurfaceMCP) && c.Source != "plugin" && !sdk {
			key = "strictPluginOnlyCustomization"
		}
		if key == "" {
			desc := settings.MCPServer{Name: name}
			switch {
			case sdk:
			case c.Type == "" || c.Type == tool.MCPStdio:
				desc.Command = append([]string{c.Command}, c.Args...)
			default:
				desc.URL = c.URL
			}
			key = m.MCPServerBlocked(desc)
		}
		if key == "" {
			continue
		}
		delete(servers, name)
		why := fmt.Sprintf("blocked by the managed policy (%s)", key)
		s.diag.Add(DiagMCP, fmt.Sprintf("MCP server %q is %s; not started", name, why))
		blocked = append(blocked, MCPServerStatus{Name: name, Status: tool.MCPFailed, Source: c.Source, Error: why})
	}
	sort.Slice(blocked, func(i, j int) bool { return blocked[i].Name < blocked[j].Name })
	return blocked
}

// pluginOnlyFiles leaves out, for the surfaces strictPluginOnlyCustomization
// locks, the skills, commands and agents that do not come from a plugin.
func (s *Session) pluginOnlyFiles(res *projectfiles.Result) {
	m := s.managed()
	var dropped []string
	if m.PluginOnly(settings.SurfaceSkills) {
		res.Skills = slices.DeleteFunc(res.Skills, func(sk projectfiles.Skill) bool {
			if sk.Source == "plugin" {
				return false
			}
			dropped = append(dropped, "skill "+sk.Name)
			return true
		})
		res.Commands = slices.DeleteFunc(res.Commands, func(c projectfiles.Command) bool {
			if c.Source == "plugin" {
				return false
			}
			dropped = append(dropped, "command /"+c.Name)
			return true
		})
	}
	if m.PluginOnly(settings.SurfaceAgents) {
		res.Agents = slices.DeleteFunc(res.Agents, func(a projectfiles.Agent) bool {
			if a.Source == "plugin" {
				return false
			}
			dropped = append(dropped, "agent "+a.Name)
			return true
		})
	}
	if len(dropped) > 0 {
		s.diag.Add(DiagProjectFile, fmt.Sprintf("strictPluginOnlyCustomization (managed policy): not loaded, not from a plugin: %s",
			strings.Join(dropped, ", ")))
	}
}

// skillShellNote replaces a shell block of a skill or command under
// disableSkillShellExecution.
const skillShellNote = "[shell command not run: disableSkillShellExecution is set by the managed policy]"

// guardSkillShell returns text with its shell blocks — !`command` inline,
// and fenced blocks opened by ```! — replaced by skillShellNote when the
// policy sets disableSkillShellExecution; text unchanged otherwise.
func (s *Session) guardSkillShell(text string) string {
	if !s.managed().DisableSkillShellExecution {
		return text
	}
	return stripSkillShell(text)
}

// stripSkillShell replaces every shell block of text by skillShellNote.
func stripSkillShell(text string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, "```!")
		j := strings.Index(text, "!`")
		switch {
		case i >= 0 && (j < 0 || i <= j):
			b.WriteString(text[:i])
			rest := text[i+len("```!"):]
			end := strings.Index(rest, "```")
			b.WriteString(skillShellNote)
			if end < 0 {
				return b.String() // an unclosed block runs to the end
			}
			text = rest[end+len("```"):]
		case j >= 0:
			b.WriteString(text[:j])
			rest := text[j+len("!`"):]
			end := strings.IndexByte(rest, '`')
			if end < 0 {
				b.WriteString(skillShellNote)
				return b.String()
			}
			b.WriteString(skillShellNote)
			text = rest[end+1:]
		default:
			b.WriteString(text)
			return b.String()
		}
	}
}
