package agentloop

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

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

// plugin is one loaded plugin.
type plugin struct {
	name, version, root string
	// manifest is the manifest's path, "" when the plugin has none.
	manifest string
	// The extra component paths of the manifest, absolute.
	commands, agents, skills []string
	// The manifest's hooks and mcpServers fields, as written.
	hooksRaw, mcpRaw json.RawMessage
	hooks            map[string][]settings.HookMatcher
	mcp              map[string]MCPServerConfig // by the session's server name
}

// pluginManifest is the part of plugin.json agentloop reads.
type pluginManifest struct {
	Name       string          `json:"name"`
	Version    string          `json:"version"`
	Commands   json.RawMessage `json:"commands"`
	Agents     json.RawMessage `json:"agents"`
	Skills     json.RawMessage `json:"skills"`
	Hooks      json.RawMessage `json:"hooks"`
	MCPServers json.RawMessage `json:"mcpServers"`
}

// manifestKeys are the manifest's fields that are read or that are only
// information for people; any other is reported as not honoured.
var manifestKeys = []string{"$schema", "name", "version", "description", "author", "homepage", "repository",
	"license", "keywords", "commands", "agents", "skills", "hooks", "mcpServers"}

// pluginName is what a plugin's name may be: it prefixes command and
// skill names and is part of MCP tool names.
var pluginName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// loadPlugins loads Options.Plugins, once: validates each, reads its
// manifest, hooks and MCP servers. Its commands, agents and skills are
// read with the .claude directories' (loadProjectFiles, pluginDirs). st
// is the session's settings (nil: none).
func (s *session) loadPlugins(st *settings.Settings) error {
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
		p, err := s.openPlugin(root)
		if err != nil {
			return fmt.Errorf("%w: Plugins[%d]: %w", ErrInvalidOption, i, err)
		}
		if prev, ok := named[p.name]; ok {
			return fmt.Errorf("%w: Plugins[%d]: plugins %s and %s are both named %q", ErrInvalidOption, i, prev, p.root, p.name)
		}
		named[p.name] = p.root
		s.loadPluginHooks(p, st)
		switch {
		case pc.SkipMCP:
		case s.opts.StrictMCPConfig:
			if s.hasPluginMCP(p) {
				s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: its MCP servers are not started (StrictMCPConfig)", p.name))
			}
		default:
			s.loadPluginMCP(p)
		}
		s.files.plugins = append(s.files.plugins, p)
	}
	return nil
}

// openPlugin checks the plugin directory root (absolute) and reads its
// manifest.
func (s *session) openPlugin(root string) (*plugin, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", root, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("plugin %s: not a directory", root)
	}
	p := &plugin{root: root, name: filepath.Base(root)}
	path := filepath.Join(root, ".claude-plugin", "plugin.json")
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !pluginName.MatchString(p.name) {
			return nil, fmt.Errorf("plugin %s: it has no manifest (%s), and its directory's name %q is not a plugin name (letters, digits, '.', '_', '-')", root, path, p.name)
		}
		return p, nil
	case err != nil:
		return nil, fmt.Errorf("plugin %s: manifest: %w", root, err)
	}
	p.manifest = path
	var m pluginManifest
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, fmt.Errorf("plugin %s: manifest %s: %w", root, path, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("plugin %s: manifest %s: %w", root, path, err)
	}
	if !pluginName.MatchString(m.Name) {
		return nil, fmt.Errorf("plugin %s: manifest %s: name %q is not a plugin name (required; letters, digits, '.', '_', '-')", root, path, m.Name)
	}
	p.name, p.version = m.Name, m.Version
	var extra []string
	for k := range keys {
		if !slices.Contains(manifestKeys, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: manifest fields %s are not honoured", p.name, strings.Join(extra, ", ")))
	}
	p.commands = s.pluginPaths(p, "commands", m.Commands)
	p.agents = s.pluginPaths(p, "agents", m.Agents)
	p.skills = s.pluginPaths(p, "skills", m.Skills)
	p.hooksRaw, p.mcpRaw = m.Hooks, m.MCPServers
	return p, nil
}

// pluginPaths reads a manifest field that holds a path or a list of
// paths, relative to the plugin's root, and returns them absolute. A
// malformed field or a path outside the plugin is reported and left out.
func (s *session) pluginPaths(p *plugin, field string, raw json.RawMessage) []string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: manifest field %s is ignored: want a path or a list of paths", p.name, field))
		return nil
	}
	var out []string
	for _, rel := range list {
		abs, err := p.path(rel)
		if err != nil {
			s.diag.Add(DiagPlugin, fmt.Sprintf("plugin %s: manifest field %s: %v; ignored", p.name, field, err))
			continue
		}
		out = append(out, abs)
	}
	return out
}

// path resolves rel, a manifest path, against the plugin's root; a path
// that is absolute or leaves the root is an error.
func (p *plugin) path(rel string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) {
		return "", fmt.Errorf("path %q is not relative to the plugin's root", rel)
	}
	abs := filepath.Join(p.root, rel)
	if r, err := filepath.Rel(p.root, abs); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q leads out of the plugin", rel)
	}
	return abs, nil
}

// expandRoot replaces ${CLAUDE_PLUGIN_ROOT} in v by the plugin's root.
func (p *plugin) expandRoot(v string) string {
	return strings.ReplaceAll(v, "${CLAUDE_PLUGIN_ROOT}", p.root)
}

// pluginDirs are the plugins' directories for projectfiles.Load: each
// namespaced by its plugin's name, with its manifest's extra paths.
func (s *session) pluginDirs() []projectfiles.Dir {
	var out []projectfiles.Dir
	for _, p := range s.files.plugins {
		out = append(out, projectfiles.Dir{Path: p.root, Source: "plugin", Namespace: p.name,
			ExtraCommands: p.commands, ExtraAgents: p.agents, ExtraSkills: p.skills})
	}
	return out
}

// pluginInit is the plugins field of system/init.
func (s *session) pluginInit() []any {
	out := []any{}
	for _, p := range s.files.plugins {
		out = append(out, message.PluginInfo{Name: p.name, Path: p.root, Version: p.version})
	}
	return out
}
