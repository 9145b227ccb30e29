package conversation

import (
	"fmt"
	"path/filepath"

	pluginpkg "github.com/agentloop/agentloop/internal/plugin"

	"github.com/agentloop/agentloop/internal/projectfiles"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/settings"
)

// Local plugins (Options.Plugins; the CLI's --plugin-dir and
// --plugin-dir-no-mcp; initialize's plugins).
//
// A plugin is a directory, its root. .claude-plugin/plugin.json, the
// manifest, names it ("name", required when the file exists; without the
// file the directory's name is the plugin's) and may give a "version" and
// further component paths. The components, each optional:
//
//   - commands/**/*.md, agents/*.md and skills/<name>/SKILL.md, read as
//     those of a .claude directory (internal/projectfiles), each name
//     prefixed by the plugin's: the command commands/hello.md of plugin
//     kit is "/kit:hello", its agent "kit:<agent>", its skill
//     "kit:<skill>". The manifest's "commands", "agents" and "skills" (a
//     path or a list of paths, relative to the root) add to the default
//     directories.
//   - hooks/hooks.json, {"hooks": {"<Event>": [matchers]}} as in a
//     settings file, and the manifest's "hooks" (a path, a list of paths
//     or the object inline). They run after the settings' hooks of the
//     same event, with CLAUDE_PLUGIN_ROOT exported to their shell (see
//     withRootEnv). disableAllHooks in the settings turns them off.
//   - .mcp.json, {"mcpServers": {...}} as the project's, and the manifest's
//     "mcpServers" (a path, a list of paths or the servers inline). Server
//     s of plugin p is named plugin_p_s (its tools mcp__plugin_p_s__<tool>)
//     and reported with source "plugin". "${CLAUDE_PLUGIN_ROOT}" and
//     environment variables (${VAR}, ${VAR:-default}) are expanded as in
//     .mcp.json. PluginConfig.SkipMCP and Options.StrictMCPConfig leave
//     them out. Plugin servers need no approval: naming the plugin is it.
//
// A plugin that cannot be used at all (no such directory, an unreadable
// or malformed manifest, a bad name, two plugins of one name) is an
// ErrInvalidOption. A broken component (a bad agent file, a malformed
// hooks.json, a server configuration in error) is a diagnostic and the
// rest of the plugin loads, as project files do.

// PluginConfig is agentloop.PluginConfig as the session reads it; the fields are
// documented there.
type PluginConfig struct {
	Path    string
	SkipMCP bool
}

// plugin is one loaded plugin: what internal/plugin read of it, and the
// hooks and MCP servers the session took from it.
type plugin struct {
	*pluginpkg.Plugin
	hooks map[string][]settings.HookMatcher
	mcp   map[string]MCPServerConfig // by the session's server name
}

// loadPlugins loads Options.Plugins, once: validates each, reads its
// manifest, hooks and MCP servers. Its commands, agents and skills are
// read with the .claude directories' (loadProjectFiles, pluginDirs). st
// is the session's settings (nil: none).
func (s *Session) loadPlugins(st *settings.Settings) error {
	if s.files.pluginsLoaded {
		return nil
	}
	s.files.pluginsLoaded = true
	named, seen := map[string]string{}, map[string]bool{}
	for i, pc := range s.opts.Plugins {
		if pc.Path == "" {
			return fmt.Errorf("%w: Plugins[%d]: no path", ErrInvalidOption, i)
		}
		root := pc.Path
		if !filepath.IsAbs(root) {
			root = filepath.Join(s.env.Cwd, root)
		}
		root = filepath.Clean(root)
		if seen[root] {
			continue // the same plugin twice
		}
		seen[root] = true
		pp, err := pluginpkg.Open(root, func(text string) { s.diag.Add(DiagPlugin, text) })
		if err != nil {
			return fmt.Errorf("%w: Plugins[%d]: %w", ErrInvalidOption, i, err)
		}
		p := &plugin{Plugin: pp}
		if prev, ok := named[p.Name]; ok {
			return fmt.Errorf("%w: Plugins[%d]: plugins %s and %s are both named %q", ErrInvalidOption, i, prev, p.Root, p.Name)
		}
		named[p.Name] = p.Root
		s.loadPluginHooks(p, st)
		switch {
		case pc.SkipMCP:
		case s.opts.StrictMCPConfig:
			if s.hasPluginMCP(p) {
				s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: its MCP servers are not started (StrictMCPConfig)", p.Name))
			}
		default:
			s.loadPluginMCP(p)
		}
		s.files.plugins = append(s.files.plugins, p)
	}
	return nil
}

// pluginDirs are the plugins' directories for projectfiles.Load: each
// namespaced by its plugin's name, with its manifest's extra paths.
func (s *Session) pluginDirs() []projectfiles.Dir {
	var out []projectfiles.Dir
	for _, p := range s.files.plugins {
		out = append(out, projectfiles.Dir{Path: p.Root, Source: "plugin", Namespace: p.Name,
			ExtraCommands: p.Commands, ExtraAgents: p.Agents, ExtraSkills: p.Skills})
	}
	return out
}

// pluginInit is the plugins field of system/init.
func (s *Session) pluginInit() []any {
	out := []any{}
	for _, p := range s.files.plugins {
		out = append(out, message.PluginInfo{Name: p.Name, Path: p.Root, Version: p.Version})
	}
	return out
}
