package conversation

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentloop/agentloop/internal/projectfiles"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// pluginSession is the part of a session loadPlugins uses.
func pluginSession(t *testing.T, plugins ...PluginConfig) *Session {
	t.Helper()
	return &Session{opts: &Config{Plugins: plugins}, env: &tool.Env{Cwd: t.TempDir(), Environ: []string{"HOME=/h"}},
		diag: &diagnostics{}}
}

// TestLoadPluginsComponents: loadPlugins reads a plugin's hooks (the
// default file, then an inline manifest entry; run with
// CLAUDE_PLUGIN_ROOT set) and its MCP servers (named plugin_<p>_<s>, source plugin,
// variables expanded); withPluginHooks puts them after the settings'
// hooks without changing the settings' map; pluginDirs namespaces the
// plugin's Markdown files.
func TestLoadPluginsComponents(t *testing.T) {
	root := filepath.Join(t.TempDir(), "kit")
	for rel, body := range map[string]string{
		".claude-plugin/plugin.json": `{"name": "kit", "version": "2.0.0", "agents": "./more-agents",
			"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}]},
			"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/db", "args": ["--home", "${HOME}"]}}}`,
		"hooks/hooks.json": `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/check.sh"}]}]}}`,
		".mcp.json":        `{"mcpServers": {"echo": {"command": "echo-server"}, "needs": {"command": "x", "env": {"K": "${UNSET_PLUGIN_VAR}"}}}}`,
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := pluginSession(t, PluginConfig{Path: root})
	if err := s.loadPlugins(nil); err != nil {
		t.Fatal(err)
	}
	settingsHooks := map[string][]settings.HookMatcher{"PreToolUse": {{Matcher: "Write", Hooks: []settings.Hook{{Type: "command", Command: "mine.sh"}}}}}
	merged := s.withPluginHooks(settingsHooks)
	type hookView struct{ Event, Matcher, Command, File string }
	var got []hookView
	for _, ev := range []string{"PreToolUse", "Stop"} {
		for _, m := range merged[ev] {
			for _, h := range m.Hooks {
				got = append(got, hookView{ev, m.Matcher, h.Command, m.File})
			}
		}
	}
	env := "export CLAUDE_PLUGIN_ROOT=" + root + "\n"
	want := []hookView{
		{"PreToolUse", "Write", "mine.sh", ""},
		{"PreToolUse", "Bash", env + "${CLAUDE_PLUGIN_ROOT}/check.sh", filepath.Join(root, "hooks/hooks.json")},
		{"Stop", "", env + "stop.sh", filepath.Join(root, ".claude-plugin/plugin.json") + " (field hooks)"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("hooks (-want +got):\n%s", d)
	}
	if len(settingsHooks["PreToolUse"]) != 1 {
		t.Errorf("the settings' hooks were changed: %+v", settingsHooks)
	}
	wantMCP := map[string]MCPServerConfig{
		"plugin_kit_echo": {Command: "echo-server", Source: "plugin"},
		"plugin_kit_db":   {Command: root + "/db", Args: []string{"--home", "/h"}, Source: "plugin"},
	}
	if d := cmp.Diff(wantMCP, s.pluginMCPServers(), cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".Server" // an interface, nil here
	}, cmp.Ignore())); d != "" {
		t.Errorf("MCP servers (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]projectfiles.Dir{{Path: root, Source: "plugin", Namespace: "kit",
		ExtraAgents: []string{filepath.Join(root, "more-agents")}}}, s.pluginDirs()); d != "" {
		t.Errorf("pluginDirs (-want +got):\n%s", d)
	}
	var diags []string
	for _, d := range s.diag.List() {
		diags = append(diags, d.Tag+": "+d.Text)
	}
	if d := cmp.Diff([]string{`plugin: plugin kit: MCP server "needs" of ` + filepath.Join(root, ".mcp.json") +
		" uses unset environment variables UNSET_PLUGIN_VAR; not started"}, diags); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

// TestLoadPluginsDisableAllHooks: with disableAllHooks in the settings
// the plugin's hooks are left out, and a diagnostic says so.
func TestLoadPluginsDisableAllHooks(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "hooks", "hooks.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := pluginSession(t, PluginConfig{Path: root})
	if err := s.loadPlugins(&settings.Settings{DisableAllHooks: true}); err != nil {
		t.Fatal(err)
	}
	if got := s.withPluginHooks(nil); len(got) != 0 {
		t.Errorf("hooks %+v, want none", got)
	}
	if l := s.diag.List(); len(l) != 1 || l[0].Tag != DiagPlugin {
		t.Errorf("diagnostics %+v, want one plugin diagnostic", l)
	}
}
