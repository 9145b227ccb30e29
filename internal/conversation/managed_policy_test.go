package conversation_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/settings"
)

// The managed policy's own keys, end to end (managed_policy.go). Each test
// writes a managed-settings file and points every session of the process
// at it (SetManagedSettingsPathForTest), so none of them runs in parallel.

// usePolicy makes policy ("" for none) the managed-settings file of the
// sessions the test starts.
func usePolicy(t *testing.T, policy string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "managed-settings.json")
	if policy != "" {
		if err := os.WriteFile(path, []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(conversation.SetManagedSettingsPathForTest(path))
}

// policyWriteFile writes data at path, making its directories.
func policyWriteFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// policyRun runs one query to its end and returns its messages and error.
func policyRun(prompt string, opts *agentloop.Options) ([]agentloop.Message, error) {
	var msgs []agentloop.Message
	for m, err := range agentloop.Query(context.Background(), prompt, opts) {
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// policyDiagnostics joins the texts of the diagnostics of msgs with tag.
func policyDiagnostics(msgs []agentloop.Message, tag string) string {
	var out []string
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == tag {
			out = append(out, d.Text)
		}
	}
	return strings.Join(out, "\n")
}

// TestManagedPermissionRulesOnly: under allowManagedPermissionRulesOnly an
// allow rule from the user file, a project file, --settings or
// Options.AllowedTools grants nothing: the Bash call that it would allow is
// asked (and, with no one to ask, denied), and the file it would create
// does not appear. The policy's own allow rule still grants, and without
// the policy the same rules run the command (the controls).
func TestManagedPermissionRulesOnly(t *testing.T) {
	const rule = `Bash(touch planted)`
	const only = `{"allowManagedPermissionRulesOnly": true}`
	cases := []struct {
		name, policy string
		ran          bool
		setup        func(t *testing.T, cwd string, o *agentloop.Options)
	}{
		{"user rule ignored", only, false, func(t *testing.T, cwd string, o *agentloop.Options) {
			dir := t.TempDir()
			t.Setenv("CLAUDE_CONFIG_DIR", dir)
			policyWriteFile(t, filepath.Join(dir, "settings.json"), `{"permissions":{"allow":["`+rule+`"]}}`)
		}},
		{"project rule ignored", only, false, func(t *testing.T, cwd string, o *agentloop.Options) {
			policyWriteFile(t, filepath.Join(cwd, ".claude", "settings.json"), `{"permissions":{"allow":["`+rule+`"]}}`)
		}},
		{"--settings rule ignored", only, false, func(t *testing.T, cwd string, o *agentloop.Options) {
			o.Settings = `{"permissions":{"allow":["` + rule + `"]}}`
		}},
		{"AllowedTools ignored", only, false, func(t *testing.T, cwd string, o *agentloop.Options) {
			o.AllowedTools = []string{rule}
		}},
		{"control: user rule without the policy", "", true, func(t *testing.T, cwd string, o *agentloop.Options) {
			dir := t.TempDir()
			t.Setenv("CLAUDE_CONFIG_DIR", dir)
			policyWriteFile(t, filepath.Join(dir, "settings.json"), `{"permissions":{"allow":["`+rule+`"]}}`)
		}},
		{"control: AllowedTools without the policy", "", true, func(t *testing.T, cwd string, o *agentloop.Options) {
			o.AllowedTools = []string{rule}
		}},
		{"the policy's own rule grants", `{"allowManagedPermissionRulesOnly": true, "permissions": {"allow": ["` + rule + `"]}}`, true,
			func(t *testing.T, cwd string, o *agentloop.Options) {}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			usePolicy(t, c.policy)
			cwd := t.TempDir()
			srv := agentlooptest.NewTB(t,
				agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch planted"}),
				agentlooptest.Text("done"))
			o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Bash"}}
			c.setup(t, cwd, o)
			msgs, err := policyRun("go", o)
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(cwd, "planted"))
			if ran := statErr == nil; ran != c.ran {
				t.Errorf("the command ran = %v, want %v", ran, c.ran)
			}
			if c.policy == only {
				if d := policyDiagnostics(msgs, agentloop.DiagSettings); !strings.Contains(d, "allowManagedPermissionRulesOnly") {
					t.Errorf("no diagnostic names allowManagedPermissionRulesOnly: %q", d)
				}
			}
		})
	}
}

// TestManagedMCPServerBlocked: a stdio MCP server that deniedMcpServers
// (or an allowlist without it) blocks is never started — its command would
// create a marker file — and shows as failed, blocked by the key, with a
// diagnostic naming the server and the key. Servers from Options.MCPServers
// and from the project's .mcp.json are both matched. The control, a deny
// list that names another server, starts it (the marker appears).
func TestManagedMCPServerBlocked(t *testing.T) {
	cases := []struct {
		name, policy, key string
		project           bool // configure the server in .mcp.json instead of Options.MCPServers
	}{
		{"denied by name", `{"deniedMcpServers": [{"serverName": "marker"}]}`, "deniedMcpServers", false},
		{"denied by command", `{"deniedMcpServers": [{"serverCommand": ["sh", "-c", "CMD"]}]}`, "deniedMcpServers", false},
		{"deny wins over allow", `{"allowedMcpServers": [{"serverName": "marker"}], "deniedMcpServers": [{"serverName": "marker"}]}`, "deniedMcpServers", false},
		{"empty allowlist", `{"allowedMcpServers": []}`, "allowedMcpServers", false},
		{"managed-only flag without an allowlist", `{"allowManagedMcpServersOnly": true}`, "allowManagedMcpServersOnly", false},
		{"project server denied", `{"deniedMcpServers": [{"serverName": "marker"}]}`, "deniedMcpServers", true},
		{"not a plugin's server", `{"strictPluginOnlyCustomization": ["mcp"]}`, "strictPluginOnlyCustomization", false},
		{"not a plugin's project server", `{"strictPluginOnlyCustomization": true}`, "strictPluginOnlyCustomization", true},
		{"control: another server denied", `{"deniedMcpServers": [{"serverName": "other"}]}`, "", false},
		{"control: project server, another denied", `{"deniedMcpServers": [{"serverName": "other"}]}`, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cwd := t.TempDir()
			marker := filepath.Join(cwd, "spawned")
			script := "touch '" + marker + "'; exit 1"
			usePolicy(t, strings.ReplaceAll(c.policy, "CMD", script))
			srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
			o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{},
				MCPConnector: mcp.Connector{}, MCPStartTimeout: 5 * time.Second}
			if c.project {
				policyWriteFile(t, filepath.Join(cwd, ".mcp.json"),
					`{"mcpServers": {"marker": {"command": "sh", "args": ["-c", "`+script+`"]}}}`)
				policyWriteFile(t, filepath.Join(cwd, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`)
			} else {
				o.MCPServers = map[string]agentloop.MCPServerConfig{"marker": {Command: "sh", Args: []string{"-c", script}}}
			}
			msgs, err := policyRun("go", o)
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(marker)
			spawned := statErr == nil
			if c.key == "" {
				if !spawned {
					t.Fatal("control: the server's command did not run")
				}
				return
			}
			if spawned {
				t.Errorf("the blocked server's command ran")
			}
			init := mcpInitOf(msgs)
			if init == nil || init.Init == nil || len(init.Init.MCPServers) != 1 || init.Init.MCPServers[0].Status != "failed" {
				t.Errorf("init mcp_servers = %+v, want marker failed", init)
			}
			if d := policyDiagnostics(msgs, agentloop.DiagMCP); !strings.Contains(d, `"marker"`) || !strings.Contains(d, c.key) {
				t.Errorf("MCP diagnostics %q do not name the server and %s", d, c.key)
			}
		})
	}
}

// TestManagedModelPolicy: a session whose model (Options.Model, the
// settings' model, a fallback model) deniedModels or availableModels
// forbids does not start; the error names the model and the key. A
// subagent whose model is forbidden fails as the Agent call's error
// result, and Client.SetModel refuses a forbidden model.
func TestManagedModelPolicy(t *testing.T) {
	refused := []struct {
		name, policy, key, model string
		setup                    func(cwd string, o *agentloop.Options)
	}{
		{"denied family", `{"deniedModels": ["opus"]}`, "deniedModels", "claude-opus",
			func(cwd string, o *agentloop.Options) { o.Model = "opus" }},
		{"not available", `{"availableModels": ["claude-sonnet-4"]}`, "availableModels", "claude-opus-4-1",
			func(cwd string, o *agentloop.Options) { o.Model = "claude-opus-4-1" }},
		{"empty allowlist", `{"availableModels": []}`, "availableModels", "claude-sonnet-4",
			func(cwd string, o *agentloop.Options) { o.Model = "claude-sonnet-4" }},
		{"settings model", `{"deniedModels": ["haiku"]}`, "deniedModels", "haiku",
			func(cwd string, o *agentloop.Options) {
				policyWriteFile(t, filepath.Join(cwd, ".claude", "settings.json"), `{"model": "haiku"}`)
			}},
		{"fallback model", `{"deniedModels": ["claude-opus-4"]}`, "deniedModels", "claude-opus-4",
			func(cwd string, o *agentloop.Options) {
				o.Model, o.FallbackModels = "claude-sonnet-4-5", []string{"claude-opus-4-1"}
			}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			usePolicy(t, c.policy)
			cwd := t.TempDir()
			srv := agentlooptest.NewTB(t, agentlooptest.Text("should not be asked"))
			srv.AllowExhausted()
			o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd}
			c.setup(cwd, o)
			_, err := policyRun("go", o)
			if !errors.Is(err, agentloop.ErrManagedPolicyDenied) {
				t.Fatalf("err = %v, want ErrManagedPolicyDenied", err)
			}
			if !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), c.model) {
				t.Errorf("err = %v, want it to name %s and %s", err, c.model, c.key)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d model requests were made", n)
			}
		})
	}

	t.Run("control: an available model runs", func(t *testing.T) {
		usePolicy(t, `{"availableModels": ["sonnet"], "deniedModels": ["haiku"]}`)
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		if _, err := policyRun("go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Model: "claude-sonnet-4-5"}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("subagent", func(t *testing.T) {
		usePolicy(t, `{"deniedModels": ["haiku"]}`)
		srv := agentlooptest.NewTB(t,
			agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Help", "prompt": "Help.", "subagent_type": "helper"}),
			agentlooptest.Text("done"))
		_, err := policyRun("go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Model: "sonnet",
			Tools: []string{"Agent"}, PermissionMode: agentloop.PermissionBypass, NoSessionPersistence: true,
			Agents: map[string]agentloop.AgentDefinition{"helper": {Description: "Helps", Prompt: "You help.", Model: "haiku"}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range srv.Requests() {
			if strings.Contains(r.SystemText(), "You help.") {
				t.Fatal("the subagent with a denied model made a model request")
			}
		}
		res := resultText(t, srv.LastRequest(), "toolu_a")
		if res.IsError == nil || !*res.IsError || !strings.Contains(res.Text, "deniedModels") {
			t.Errorf("Agent result = %+v, want an error naming deniedModels", res)
		}
	})

	t.Run("SetModel", func(t *testing.T) {
		usePolicy(t, `{"deniedModels": ["opus"]}`)
		srv := agentlooptest.NewTB(t)
		c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Model: "sonnet"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.SetModel("opus"); !errors.Is(err, agentloop.ErrManagedPolicyDenied) {
			t.Errorf("SetModel(opus) = %v, want ErrManagedPolicyDenied", err)
		}
		if strings.Contains(c.Model(), "opus") {
			t.Errorf("model is %s after a refused switch", c.Model())
		}
	})
}

// TestManagedSkillShellDisabled: with disableSkillShellExecution, the
// shell block of a skill reaches the model as a note that the policy
// forbids it, through "/skill" and through the Skill tool alike, and its
// command never runs. Without the policy the text stays as written
// (agentloop never runs such blocks).
func TestManagedSkillShellDisabled(t *testing.T) {
	const note = "disableSkillShellExecution is set by the managed policy"
	for _, policy := range []string{`{"disableSkillShellExecution": true}`, ""} {
		for _, via := range []string{"prompt", "tool"} {
			t.Run(via+"/policy="+policy, func(t *testing.T) {
				usePolicy(t, policy)
				cwd := t.TempDir()
				marker := filepath.Join(cwd, "shell-ran")
				policyWriteFile(t, filepath.Join(cwd, ".claude", "skills", "shelly", "SKILL.md"),
					"---\nname: shelly\ndescription: Reports the status.\n---\nStatus: !`touch '"+marker+"'`\n\n```!\ntouch '"+marker+"'\n```\nThen summarise.\n")
				prompt := "/shelly"
				replies := []agentlooptest.Reply{agentlooptest.Text("done")}
				if via == "tool" {
					prompt = "use the skill"
					replies = append([]agentlooptest.Reply{agentlooptest.ToolUse("toolu_s", "Skill", map[string]any{"skill": "shelly"})}, replies...)
				}
				srv := agentlooptest.NewTB(t, replies...)
				if _, err := policyRun(prompt, &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
					PermissionMode: agentloop.PermissionBypass, NoSessionPersistence: true}); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Error("the skill's shell block ran")
				}
				last := string(srv.LastRequest().Body)
				switch {
				case policy != "" && (!strings.Contains(last, note) || strings.Contains(last, "touch ")):
					t.Errorf("the model got the shell block, not the policy's note: %s", last)
				case policy == "" && !strings.Contains(last, "touch "):
					t.Errorf("without the policy the skill's text changed: %s", last)
				}
			})
		}
	}
}

// TestManagedUnsupportedKey: a managed key agentloop cannot enforce stops
// the session with ErrManagedPolicyUnsupported naming the key; the same
// key in a project file is only a warning.
func TestManagedUnsupportedKey(t *testing.T) {
	usePolicy(t, `{"forceLoginMethod": "claudeai"}`)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("should not be asked"))
	srv.AllowExhausted()
	_, err := policyRun("go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir()})
	if !errors.Is(err, agentloop.ErrManagedPolicyUnsupported) || !strings.Contains(err.Error(), "forceLoginMethod") {
		t.Fatalf("err = %v, want ErrManagedPolicyUnsupported naming forceLoginMethod", err)
	}

	usePolicy(t, "")
	cwd := t.TempDir()
	policyWriteFile(t, filepath.Join(cwd, ".claude", "settings.json"), `{"forceLoginMethod": "claudeai", "deniedModels": ["sonnet"]}`)
	srv = agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	msgs, err := policyRun("go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, Model: "sonnet"})
	if err != nil {
		t.Fatal(err)
	}
	if d := policyDiagnostics(msgs, agentloop.DiagSettings); !strings.Contains(d, "forceLoginMethod ignored: only the managed policy") ||
		!strings.Contains(d, "deniedModels ignored") {
		t.Errorf("settings diagnostics = %q, want the project's managed keys reported as ignored", d)
	}
}

// TestManagedHooksAndPluginOnly: allowManagedHooksOnly drops a plugin's
// hooks (its UserPromptSubmit hook would write a marker);
// strictPluginOnlyCustomization keeps a plugin's hook, skill and agent
// but drops a --settings hook and the project's .claude skill and agent.
// Without a policy everything loads (the control).
func TestManagedHooksAndPluginOnly(t *testing.T) {
	cases := []struct {
		name, policy            string
		pluginHook, settingHook bool // the hooks that must run
		projectFiles            bool // the project's skill and agent load
	}{
		{"control", "", true, true, true},
		{"allowManagedHooksOnly", `{"allowManagedHooksOnly": true}`, false, false, true},
		{"strict hooks", `{"strictPluginOnlyCustomization": ["hooks"]}`, true, false, true},
		{"strict all", `{"strictPluginOnlyCustomization": true}`, true, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			usePolicy(t, c.policy)
			cwd := t.TempDir()
			marks := t.TempDir()
			pluginMark, settingMark := filepath.Join(marks, "plugin-hook"), filepath.Join(marks, "settings-hook")
			root := filepath.Join(t.TempDir(), "kit")
			writeTree(t, root, map[string]string{
				".claude-plugin/plugin.json": `{"name": "kit"}`,
				"hooks/hooks.json":           `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch '` + pluginMark + `'"}]}]}}`,
				"skills/kitskill/SKILL.md":   "---\ndescription: Kit skill\n---\nKit.\n",
				"agents/kitagent.md":         "---\ndescription: Kit agent\n---\nYou kit.\n",
			})
			writeTree(t, cwd, map[string]string{
				".claude/skills/projskill/SKILL.md": "---\ndescription: Project skill\n---\nProject.\n",
				".claude/agents/projagent.md":       "---\ndescription: Project agent\n---\nYou project.\n",
			})
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			msgs, err := policyRun("go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
				Plugins:  []agentloop.PluginConfig{{Path: root}},
				Settings: `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch '` + settingMark + `'"}]}]}}`})
			if err != nil {
				t.Fatal(err)
			}
			exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
			if got := exists(pluginMark); got != c.pluginHook {
				t.Errorf("plugin hook ran = %v, want %v", got, c.pluginHook)
			}
			if got := exists(settingMark); got != c.settingHook {
				t.Errorf("--settings hook ran = %v, want %v", got, c.settingHook)
			}
			init := mcpInitOf(msgs)
			if init == nil || init.Init == nil {
				t.Fatal("no init message")
			}
			hasKit := slices.ContainsFunc(init.Init.Skills, func(s string) bool { return strings.Contains(s, "kitskill") }) &&
				slices.ContainsFunc(init.Init.Agents, func(s string) bool { return strings.Contains(s, "kitagent") })
			hasProject := slices.Contains(init.Init.Skills, "projskill") || slices.Contains(init.Init.Agents, "projagent")
			if !hasKit {
				t.Errorf("the plugin's skill or agent is missing: skills %v, agents %v", init.Init.Skills, init.Init.Agents)
			}
			if hasProject != c.projectFiles {
				t.Errorf("project skill/agent loaded = %v, want %v (skills %v, agents %v)", hasProject, c.projectFiles, init.Init.Skills, init.Init.Agents)
			}
		})
	}
}

// TestManagedHTTPHookPolicy: the managed policy's allowedHttpHookUrls
// reaches the session's hooks: an http hook of a settings file whose URL
// the policy does not list is never called. Without the policy (the
// control) the same hook is called: the test can fail.
func TestManagedHTTPHookPolicy(t *testing.T) {
	for _, c := range []struct {
		name, policy string
		called       bool
	}{
		{"control", "", true},
		{"listed elsewhere", `{"allowedHttpHookUrls": ["https://hooks.example.com/*"]}`, false},
		{"none allowed", `{"allowedHttpHookUrls": []}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			usePolicy(t, c.policy)
			var calls atomic.Int32
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				w.Write([]byte(`{}`))
			}))
			defer hook.Close()
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			_, err := policyRun("go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(),
				Settings: `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "http", "url": "` + hook.URL + `/h"}]}]}}`})
			if err != nil {
				t.Fatal(err)
			}
			if got := calls.Load() > 0; got != c.called {
				t.Errorf("http hook called = %v, want %v", got, c.called)
			}
		})
	}
}

// TestManagedPermissionRulesOnlyRuntime: under allowManagedPermissionRulesOnly
// an allow rule that CanUseTool adds while the session runs (its
// UpdatedPermissions) grants nothing either: the next matching call is
// asked again. Without the policy (the control) the rule settles it.
func TestManagedPermissionRulesOnlyRuntime(t *testing.T) {
	for _, c := range []struct {
		name, policy string
		wantAsked    int
	}{
		{"control", "", 1},
		{"policy", `{"allowManagedPermissionRulesOnly": true}`, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			usePolicy(t, c.policy)
			cwd := t.TempDir()
			srv := agentlooptest.NewTB(t,
				agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch first"}),
				agentlooptest.ToolUse("toolu_2", "Bash", map[string]any{"command": "touch second"}),
				agentlooptest.Text("done"))
			var asked atomic.Int32
			o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Bash"},
				CanUseTool: func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
					asked.Add(1)
					res := agentloop.Allow()
					res.UpdatedPermissions = []agentloop.PermissionUpdate{{Type: "addRules", Behavior: "allow",
						Destination: "session", Rules: []settings.RuleValue{{ToolName: "Bash", RuleContent: "touch *"}}}}
					return res, nil
				}}
			if _, err := policyRun("go", o); err != nil {
				t.Fatal(err)
			}
			if got := int(asked.Load()); got != c.wantAsked {
				t.Errorf("CanUseTool asked %d times, want %d", got, c.wantAsked)
			}
		})
	}
}

// TestManagedDeniedHelperModels: deniedModels binds the requests
// agentloop makes on its own: the auto-mode classifier (haiku) is not
// called when the policy denies haiku, so the call it would have settled
// is not run. The control, without the policy, calls it.
func TestManagedDeniedHelperModels(t *testing.T) {
	for _, c := range []struct {
		name, policy string
		wantClassify bool
	}{
		{"control", "", true},
		{"haiku denied", `{"deniedModels": ["haiku"]}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			usePolicy(t, c.policy)
			cwd := t.TempDir()
			srv := agentlooptest.NewTB(t,
				agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch made-it"}),
				agentlooptest.Text("done"))
			classified := 0
			srv.Route(func(r *agentlooptest.Request) bool {
				if len(r.Params.Tools) == 0 && strings.Contains(r.SystemText(), "autonomous coding agent") {
					classified++
					return true
				}
				return false
			}, agentlooptest.Text(`{"decision":"allow","reason":"fine"}`))
			o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Bash"},
				PermissionMode: agentloop.PermissionAuto, Model: "claude-sonnet-4-5"}
			if _, err := policyRun("go", o); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(filepath.Join(cwd, "made-it"))
			if (classified > 0) != c.wantClassify || (err == nil) != c.wantClassify {
				t.Errorf("classifier called %d times, command ran %v; want %v", classified, err == nil, c.wantClassify)
			}
		})
	}
}
