package conversation_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// writeTree writes files (path relative to root → contents) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pluginKit writes the plugin "kit" into a new directory and returns it:
// a command, an agent, a skill, a command from a manifest path, a
// PreToolUse hook on its MCP tool that writes hook-ran into the plugin's
// root through ${CLAUDE_PLUGIN_ROOT}, and the stdio test MCP server as
// server "echo". over replaces or adds files.
func pluginKit(t *testing.T, over map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "kit-dir")
	files := map[string]string{
		".claude-plugin/plugin.json": `{"name": "kit", "version": "1.2.0", "description": "A test kit",
			"author": {"name": "T"}, "commands": ["./more/special.md"], "lspServers": "./.lsp.json"}`,
		"commands/hello.md":       "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS.\n",
		"more/special.md":         "Something special.\n",
		"agents/helper.md":        "---\ndescription: Helps with things\n---\nYou help.\n",
		"skills/review/SKILL.md":  "---\ndescription: Review code\n---\nReview carefully.\n",
		"hooks/hooks.json":        `{"description": "kit hooks", "hooks": {"PreToolUse": [{"matcher": "mcp__plugin_kit_echo__echo", "hooks": [{"type": "command", "command": "echo fired > \"${CLAUDE_PLUGIN_ROOT}/hook-ran\""}]}]}}`,
		".mcp.json":               `{"mcpServers": {"echo": {"command": "` + mcpServerBinary(t) + `", "env": {"TESTSERVER_NAME": "${CLAUDE_PLUGIN_ROOT}"}}}}`,
		"scripts/not-a-component": "x",
	}
	for k, v := range over {
		files[k] = v
	}
	writeTree(t, root, files)
	return root
}

// pluginRun runs prompt with opts (Provider, Cwd, MCPConnector, no
// setting sources, no tool search) and returns the init message and the
// diagnostics.
func pluginRun(t *testing.T, srv *agentlooptest.Server, prompt string, opts *agentloop.Options) (*message.Init, []agentloop.Diagnostic) {
	t.Helper()
	opts.Provider, opts.Cwd, opts.MCPConnector = provider(t, srv, nil), t.TempDir(), mcp.Connector{}
	opts.SettingSources, opts.ToolSearch = []settings.SettingSource{}, agentloop.ToolSearchOff
	var msgs []agentloop.Message
	for m, err := range agentloop.Query(context.Background(), prompt, opts) {
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	init := mcpInitOf(msgs)
	if init == nil || init.Init == nil {
		t.Fatal("no init message")
	}
	var diags []agentloop.Diagnostic
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok {
			diags = append(diags, d)
		}
	}
	return init.Init, diags
}

// TestPluginLoaded: a plugin's components join the session: init lists
// the plugin and its namespaced commands, skill and agent; its MCP
// server's tool is mcp__plugin_kit_echo__echo (source "plugin") and a call
// reaches the server; its PreToolUse hook fires with ${CLAUDE_PLUGIN_ROOT}
// expanded; a manifest field agentloop does not honour is a diagnostic.
func TestPluginLoaded(t *testing.T) {
	root := pluginKit(t, nil)
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "mcp__plugin_kit_echo__echo", map[string]any{"text": "hi"}),
		agentlooptest.Text("done"))
	init, diags := pluginRun(t, srv, "go", &agentloop.Options{Plugins: []agentloop.PluginConfig{{Path: root}},
		AllowedTools: []string{"mcp__plugin_kit_echo"}})
	if d := cmp.Diff([]any{message.PluginInfo{Name: "kit", Path: root, Version: "1.2.0"}}, init.Plugins); d != "" {
		t.Errorf("init plugins (-want +got):\n%s", d)
	}
	got := map[string][]string{"commands": init.SlashCommands, "skills": init.Skills, "agents": init.Agents}
	want := map[string][]string{
		"commands": append(conversation.BuiltinCommandNames(), "kit:hello", "kit:special", "kit:review"),
		"skills":   {"kit:review"},
		"agents":   {"general-purpose", "kit:helper"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("init lists (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]message.MCPServer{{Name: "plugin_kit_echo", Status: "connected", Source: "plugin"}}, init.MCPServers); d != "" {
		t.Errorf("init mcp_servers (-want +got):\n%s", d)
	}
	if !slices.Contains(init.Tools, "mcp__plugin_kit_echo__echo") {
		t.Errorf("tools %v lack mcp__plugin_kit_echo__echo", init.Tools)
	}
	if c := mcpResult(t, srv, "toolu_1"); mcpText(c) != "echo: hi" {
		t.Errorf("echo result = %+v", c)
	}
	if b, err := os.ReadFile(filepath.Join(root, "hook-ran")); err != nil || strings.TrimSpace(string(b)) != "fired" {
		t.Errorf("the plugin's PreToolUse hook did not write hook-ran: %q, %v", b, err)
	}
	if !hasDiag(diags, agentloop.DiagPlugin, "plugin kit: manifest fields lspServers are not honoured") {
		t.Errorf("no diagnostic for lspServers: %+v", diags)
	}
}

// TestPluginCommandRuns: "/kit:hello world" runs the plugin's command, its
// $ARGUMENTS filled in.
func TestPluginCommandRuns(t *testing.T) {
	root := pluginKit(t, map[string]string{".mcp.json": `{"mcpServers": {}}`})
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	pluginRun(t, srv, "/kit:hello world", &agentloop.Options{Plugins: []agentloop.PluginConfig{{Path: root}}})
	if got := srv.Requests()[0].LastUserText(); !strings.Contains(got, "Say hello to world.") || strings.Contains(got, "/kit:hello world") {
		t.Errorf("prompt sent:\n%s\nwant the command's text with its argument", got)
	}
}

// TestPluginMCPLeftOut: SkipMCP, and StrictMCPConfig, leave the plugin's
// MCP servers out and load the rest of it.
func TestPluginMCPLeftOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts agentloop.Options
	}{
		{"SkipMCP", agentloop.Options{Plugins: []agentloop.PluginConfig{{SkipMCP: true}}}},
		{"StrictMCPConfig", agentloop.Options{Plugins: []agentloop.PluginConfig{{}}, StrictMCPConfig: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Plugins[0].Path = pluginKit(t, nil)
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			init, _ := pluginRun(t, srv, "go", &tc.opts)
			if len(init.MCPServers) != 0 || slices.ContainsFunc(init.Tools, func(n string) bool { return strings.HasPrefix(n, "mcp__plugin_") }) {
				t.Errorf("mcp_servers %v, tools %v: want no plugin server", init.MCPServers, init.Tools)
			}
			if !slices.Contains(init.SlashCommands, "kit:hello") || len(init.Plugins) != 1 {
				t.Errorf("slash_commands %v, plugins %v: the rest of the plugin is not loaded", init.SlashCommands, init.Plugins)
			}
		})
	}
}

// TestPluginBrokenComponents: a malformed hooks.json, a hook file the
// settings rules reject, a broken .mcp.json and a bad agent file are each
// a diagnostic; the session starts and the plugin's other components load.
func TestPluginBrokenComponents(t *testing.T) {
	root := pluginKit(t, map[string]string{
		".claude-plugin/plugin.json": `{"name": "kit", "hooks": "./more-hooks.json"}`,
		"hooks/hooks.json":           `{"hooks": {"PreToolUse": [`,
		"more-hooks.json":            `{"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}`,
		".mcp.json":                  `{"mcpServers": {"bad": {"type": "carrier-pigeon"}}}`,
		"agents/broken.md":           "---\nname: [broken\n---\nbody\n",
	})
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	init, diags := pluginRun(t, srv, "go", &agentloop.Options{Plugins: []agentloop.PluginConfig{{Path: root}}})
	for _, want := range []struct{ tag, text string }{
		{agentloop.DiagPlugin, "plugin kit: hooks of " + filepath.Join(root, "hooks/hooks.json") + " are ignored: malformed JSON"},
		{agentloop.DiagPlugin, "plugin kit: hooks of " + filepath.Join(root, "more-hooks.json") + " are ignored: " + filepath.Join(root, "more-hooks.json")},
		{agentloop.DiagPlugin, "plugin kit: MCP servers of " + filepath.Join(root, ".mcp.json") + ` are not started: mcp config: server "bad": unknown type`},
		{agentloop.DiagProjectFile, "broken.md is ignored: malformed frontmatter"},
	} {
		if !hasDiag(diags, want.tag, want.text) {
			t.Errorf("no %s diagnostic %q in:\n%+v", want.tag, want.text, diags)
		}
	}
	if !slices.Contains(init.SlashCommands, "kit:hello") || !slices.Contains(init.Agents, "kit:helper") || len(init.MCPServers) != 0 {
		t.Errorf("slash_commands %v, agents %v, mcp_servers %v: want the plugin's good parts only", init.SlashCommands, init.Agents, init.MCPServers)
	}
}

// TestPluginInvalid: a plugin that cannot be loaded is an ErrInvalidOption
// naming it, before any request.
func TestPluginInvalid(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"file":                                 "x",
		"malformed/.claude-plugin/plugin.json": `{"name": "m",`,
		"noname/.claude-plugin/plugin.json":    `{"version": "1"}`,
		"spaced/.claude-plugin/plugin.json":    `{"name": "my kit"}`,
		"one/.claude-plugin/plugin.json":       `{"name": "same"}`,
		"two/.claude-plugin/plugin.json":       `{"name": "same"}`,
		"bad name!/README":                     "no manifest",
	})
	for _, tc := range []struct {
		name  string
		paths []string
		want  string
	}{
		{"empty path", []string{""}, "Plugins[0]: no path"},
		{"missing", []string{filepath.Join(dir, "nope")}, "plugin " + filepath.Join(dir, "nope") + ": stat"},
		{"not a directory", []string{filepath.Join(dir, "file")}, "not a directory"},
		{"malformed manifest", []string{filepath.Join(dir, "malformed")}, "plugin " + filepath.Join(dir, "malformed") + ": manifest"},
		{"no name", []string{filepath.Join(dir, "noname")}, `name "" is not a plugin name`},
		{"bad name", []string{filepath.Join(dir, "spaced")}, `name "my kit" is not a plugin name`},
		{"bad directory name", []string{filepath.Join(dir, "bad name!")}, `directory's name "bad name!" is not a plugin name`},
		{"two of one name", []string{filepath.Join(dir, "one"), filepath.Join(dir, "two")}, `Plugins[1]: plugins ` + filepath.Join(dir, "one") + " and " + filepath.Join(dir, "two") + ` are both named "same"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			var plugins []agentloop.PluginConfig
			for _, p := range tc.paths {
				plugins = append(plugins, agentloop.PluginConfig{Path: p})
			}
			_, err := mcpRun(t, context.Background(), &agentloop.Options{Provider: provider(t, srv, nil), Cwd: dir,
				SettingSources: []settings.SettingSource{}, Plugins: plugins})
			if !errors.Is(err, agentloop.ErrInvalidOption) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want an ErrInvalidOption containing %q", err, tc.want)
			}
			if srv.Len() != 0 {
				t.Errorf("%d requests made", srv.Len())
			}
		})
	}
}

// TestPluginRelativePath: a relative Path is relative to Options.Cwd, and
// a plugin without a manifest is named after its directory.
func TestPluginRelativePath(t *testing.T) {
	cwd := t.TempDir()
	writeTree(t, cwd, map[string]string{"plugins/tools/commands/go.md": "Go now.\n"})
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, SettingSources: []settings.SettingSource{},
		Plugins: []agentloop.PluginConfig{{Path: "plugins/tools"}, {Path: filepath.Join(cwd, "plugins/tools")}}}
	msgs, err := mcpRun(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	init := mcpInitOf(msgs).Init
	if d := cmp.Diff([]any{message.PluginInfo{Name: "tools", Path: filepath.Join(cwd, "plugins/tools")}}, init.Plugins); d != "" {
		t.Errorf("init plugins (-want +got):\n%s", d)
	}
	if !slices.Contains(init.SlashCommands, "tools:go") {
		t.Errorf("slash_commands %v lack tools:go", init.SlashCommands)
	}
}
