package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agentloop/agentloop/internal/mcphost"
	"github.com/agentloop/agentloop/settings"
)

// A plugin's hooks and MCP servers (see plugins.go).

// pluginSource is one configuration text of a plugin component: a file,
// or a manifest field given inline.
type pluginSource struct {
	display string // the file, or "<manifest> (field <name>)"
	data    []byte
}

// pluginSources gathers a component's configurations: the default file
// def under the root, when it exists, then what the manifest field holds
// (a path, a list of paths, or the configuration inline). What cannot be
// read is reported and left out.
func (s *Session) pluginSources(p *plugin, field, def string, raw json.RawMessage) []pluginSource {
	var out []pluginSource
	read := func(path string) {
		if slices.ContainsFunc(out, func(o pluginSource) bool { return o.display == path }) {
			return // the manifest names the default file
		}
		data, err := os.ReadFile(path)
		if err != nil {
			s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: %s is ignored: %v", p.Name, path, err))
			return
		}
		out = append(out, pluginSource{display: path, data: data})
	}
	if _, err := os.Stat(filepath.Join(p.Root, def)); err == nil {
		read(filepath.Join(p.Root, def))
	}
	if len(raw) == 0 || string(raw) == "null" {
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		return append(out, pluginSource{display: fmt.Sprintf("%s (field %s)", p.Manifest, field), data: raw})
	}
	for _, path := range p.Paths(field, raw, func(text string) { s.diag.Add(DiagPlugin, text) }) {
		read(path)
	}
	return out
}

// loadPluginHooks reads the plugin's hooks into p.hooks; their commands
// run with CLAUDE_PLUGIN_ROOT set to the plugin's root (WithRootEnv).
func (s *Session) loadPluginHooks(p *plugin, st *settings.Settings) {
	for _, src := range s.pluginSources(p, "hooks", filepath.Join("hooks", "hooks.json"), p.HooksRaw) {
		hooks, warnings, err := parsePluginHooks(p, src)
		for _, w := range warnings {
			s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: %s", p.Name, w))
		}
		if err != nil {
			s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: hooks of %s are ignored: %v", p.Name, src.display, err))
			continue
		}
		if len(hooks) > 0 && st != nil && st.DisableAllHooks {
			s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: hooks of %s do not run: the settings set disableAllHooks", p.Name, src.display))
			continue
		}
		if len(hooks) > 0 && st != nil && st.Managed.HooksOnly {
			s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: hooks of %s do not run: the managed policy sets allowManagedHooksOnly", p.Name, src.display))
			continue
		}
		if p.hooks == nil {
			p.hooks = map[string][]settings.HookMatcher{}
		}
		for ev, ms := range hooks {
			p.hooks[ev] = append(p.hooks[ev], ms...)
		}
	}
}

// parsePluginHooks reads one hooks configuration, {"hooks": {"<Event>":
// [matchers]}} or the events object alone, with the settings files'
// rules (package settings reads it as the hooks of an inline --settings
// value, the only other settings it is given being none).
func parsePluginHooks(p *plugin, src pluginSource) (map[string][]settings.HookMatcher, []string, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(src.data, &doc); err != nil {
		return nil, nil, fmt.Errorf("malformed JSON: %w", err)
	}
	events := json.RawMessage(src.data)
	if h, ok := doc["hooks"]; ok {
		events = h
	}
	inline, err := json.Marshal(map[string]json.RawMessage{"hooks": events})
	if err != nil {
		return nil, nil, fmt.Errorf("malformed JSON: %w", err)
	}
	st, err := settings.Load(settings.Options{Cwd: p.Root, Home: p.Root, ConfigDir: p.Root,
		Sources: []settings.SettingSource{}, Flag: string(inline), ManagedPath: os.DevNull})
	rename := func(msg string) string { return strings.ReplaceAll(msg, "--settings", src.display) }
	if err != nil {
		return nil, nil, errors.New(rename(err.Error()))
	}
	var warnings []string
	for _, w := range st.Warnings {
		warnings = append(warnings, rename(w))
	}
	for ev, ms := range st.Hooks {
		for i := range ms {
			ms[i].File = src.display
			for j := range ms[i].Hooks {
				h := &ms[i].Hooks[j]
				if h.Command != "" {
					cmd, err := p.WithRootEnv(h.Command)
					if err != nil {
						return nil, nil, err
					}
					h.Command = cmd
				}
				for k := range h.Args {
					h.Args[k] = p.ExpandRoot(h.Args[k])
				}
			}
		}
		st.Hooks[ev] = ms
	}
	return st.Hooks, warnings, nil
}

// withPluginHooks is commands, the settings' hooks, with the plugins'
// hooks after them in each event; commands itself is not changed.
func (s *Session) withPluginHooks(commands map[string][]settings.HookMatcher) map[string][]settings.HookMatcher {
	if !slices.ContainsFunc(s.files.plugins, func(p *plugin) bool { return len(p.hooks) > 0 }) {
		return commands
	}
	out := make(map[string][]settings.HookMatcher, len(commands))
	for ev, ms := range commands {
		out[ev] = slices.Clip(ms) // an append copies
	}
	for _, p := range s.files.plugins {
		for ev, ms := range p.hooks {
			out[ev] = append(out[ev], ms...)
		}
	}
	return out
}

// hasPluginMCP reports whether the plugin configures MCP servers.
func (s *Session) hasPluginMCP(p *plugin) bool {
	_, err := os.Stat(filepath.Join(p.Root, ".mcp.json"))
	return err == nil || len(p.MCPRaw) > 0 && string(p.MCPRaw) != "null"
}

// loadPluginMCP reads the plugin's MCP servers into p.mcp, each named
// plugin_<plugin>_<server>, with ${CLAUDE_PLUGIN_ROOT} and environment
// variables expanded. A configuration in error, or a server that uses an
// unset variable, is reported and left out.
func (s *Session) loadPluginMCP(p *plugin) {
	lookup := func(name string) (string, bool) {
		if name == "CLAUDE_PLUGIN_ROOT" {
			return p.Root, true
		}
		return s.envLookup(name)
	}
	for _, src := range s.pluginSources(p, "mcpServers", ".mcp.json", p.MCPRaw) {
		servers, err := parsePluginMCP(src.data)
		if err != nil {
			s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: MCP servers of %s are not started: %v", p.Name, src.display, err))
			continue
		}
		names := slices.Collect(maps.Keys(servers))
		sort.Strings(names)
		for _, n := range names {
			c, missing := mcphost.ExpandEnv(servers[n], lookup)
			if len(missing) > 0 {
				s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: MCP server %q of %s uses unset environment variables %s; not started",
					p.Name, n, src.display, strings.Join(missing, ", ")))
				continue
			}
			name := "plugin_" + p.Name + "_" + n
			if _, dup := p.mcp[name]; dup {
				s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: MCP server %q of %s is ignored: an earlier configuration of the plugin defines it", p.Name, n, src.display))
				continue
			}
			c.Source = "plugin"
			if p.mcp == nil {
				p.mcp = map[string]MCPServerConfig{}
			}
			p.mcp[name] = c
		}
	}
}

// parsePluginMCP reads one MCP configuration: {"mcpServers": {...}} or
// the servers object alone.
func parsePluginMCP(data []byte) (map[string]MCPServerConfig, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("mcp config: %w", err)
	}
	if _, ok := doc["mcpServers"]; !ok {
		wrapped, err := json.Marshal(map[string]any{"mcpServers": doc})
		if err != nil {
			return nil, fmt.Errorf("mcp config: %w", err)
		}
		data = wrapped
	}
	return ParseMCPConfig(data)
}

// pluginMCPServers are the MCP servers of all plugins, by name.
func (s *Session) pluginMCPServers() map[string]MCPServerConfig {
	out := map[string]MCPServerConfig{}
	for _, p := range s.files.plugins {
		maps.Copy(out, p.mcp)
	}
	return out
}
