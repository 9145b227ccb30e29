// Package plugin reads a local plugin: a directory whose
// .claude-plugin/plugin.json (the manifest) names it and may list more
// component paths. The session (the root package) loads its components:
// commands, agents and skills through internal/projectfiles, hooks and MCP
// servers through the settings and MCP glue.
package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Plugin is one plugin as its directory and manifest describe it.
type Plugin struct {
	Name, Version, Root string
	// Manifest is the manifest's path, "" when the plugin has none.
	Manifest string
	// The extra component paths of the manifest, absolute.
	Commands, Agents, Skills []string
	// The manifest's hooks and mcpServers fields, as written.
	HooksRaw, MCPRaw json.RawMessage
}

// manifest is the part of plugin.json agentloop reads.
type manifest struct {
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

// validName reports whether name may be a plugin's name, which prefixes
// command and skill names and is part of MCP tool names: an ASCII letter
// or digit, then letters, digits, '.', '_' and '-'.
func validName(name string) bool {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return name != ""
}

// Open checks the plugin directory root (absolute) and reads its
// manifest. What it reads but does not honour goes to report, one text
// each (nil: nowhere).
func Open(root string, report func(text string)) (*Plugin, error) {
	if report == nil {
		report = func(string) {}
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", root, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("plugin %s: not a directory", root)
	}
	p := &Plugin{Root: root, Name: filepath.Base(root)}
	path := filepath.Join(root, ".claude-plugin", "plugin.json")
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !validName(p.Name) {
			return nil, fmt.Errorf("plugin %s: it has no manifest (%s), and its directory's name %q is not a plugin name (letters, digits, '.', '_', '-')", root, path, p.Name)
		}
		return p, nil
	case err != nil:
		return nil, fmt.Errorf("plugin %s: manifest: %w", root, err)
	}
	p.Manifest = path
	var m manifest
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, fmt.Errorf("plugin %s: manifest %s: %w", root, path, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("plugin %s: manifest %s: %w", root, path, err)
	}
	if !validName(m.Name) {
		return nil, fmt.Errorf("plugin %s: manifest %s: name %q is not a plugin name (required; letters, digits, '.', '_', '-')", root, path, m.Name)
	}
	p.Name, p.Version = m.Name, m.Version
	var extra []string
	for k := range keys {
		if !slices.Contains(manifestKeys, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		report(fmt.Sprintf("plugin %s: manifest fields %s are not honoured", p.Name, strings.Join(extra, ", ")))
	}
	p.Commands = p.Paths("commands", m.Commands, report)
	p.Agents = p.Paths("agents", m.Agents, report)
	p.Skills = p.Paths("skills", m.Skills, report)
	p.HooksRaw, p.MCPRaw = m.Hooks, m.MCPServers
	return p, nil
}

// Paths reads a manifest field that holds a path or a list of
// paths, relative to the plugin's root, and returns them absolute. A
// malformed field or a path outside the plugin is reported and left out.
func (p *Plugin) Paths(field string, raw json.RawMessage, report func(string)) []string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		report(fmt.Sprintf("plugin %s: manifest field %s is ignored: want a path or a list of paths", p.Name, field))
		return nil
	}
	var out []string
	for _, rel := range list {
		abs, err := p.Path(rel)
		if err != nil {
			report(fmt.Sprintf("plugin %s: manifest field %s: %v; ignored", p.Name, field, err))
			continue
		}
		out = append(out, abs)
	}
	return out
}

// Path resolves rel, a manifest path, against the plugin's root; a path
// that is absolute or leaves the root is an error.
func (p *Plugin) Path(rel string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) {
		return "", fmt.Errorf("path %q is not relative to the plugin's root", rel)
	}
	abs := filepath.Join(p.Root, rel)
	if r, err := filepath.Rel(p.Root, abs); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q leads out of the plugin", rel)
	}
	return abs, nil
}

// ExpandRoot replaces ${CLAUDE_PLUGIN_ROOT} in v by the plugin's root.
func (p *Plugin) ExpandRoot(v string) string {
	return strings.ReplaceAll(v, "${CLAUDE_PLUGIN_ROOT}", p.Root)
}

// WithRootEnv is a hook's shell command run with CLAUDE_PLUGIN_ROOT set
// to the plugin's root, so that the shell expands ${CLAUDE_PLUGIN_ROOT}
// and the hook's scripts find it in their environment. The root is
// quoted for bash, never pasted into the command's text: a directory
// name with quotes, "$" or ";" in it stays one word and runs nothing.
func (p *Plugin) WithRootEnv(command string) (string, error) {
	q, err := syntax.Quote(p.Root, syntax.LangBash)
	if err != nil {
		return "", fmt.Errorf("the plugin's directory %q cannot be quoted for the shell: %w", p.Root, err)
	}
	return "export CLAUDE_PLUGIN_ROOT=" + q + "\n" + command, nil
}
