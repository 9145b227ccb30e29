package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// toolNames are the names of the tools a request declares.
func toolNames(r *agentlooptest.Request) []string {
	var out []string
	for _, t := range r.Params.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestMainAgentOption: with Options.Agent the main loop runs as that
// agent: its prompt in place of agentloop's (the environment and
// AppendSystemPrompt kept), its tools, model, effort, permission mode and
// turn limit; its initial prompt when the Query has none.
func TestMainAgentOption(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("t1", "Read", map[string]any{"file_path": "/nonexistent"}),
		agentlooptest.Text("done"))
	cwd := t.TempDir()
	o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}, AppendSystemPrompt: "APPENDED",
		Agent: "reviewer", EmptySystemPrompt: true, // the SDKs' default: the agent's prompt wins
		Agents: map[string]agentloop.AgentDefinition{"reviewer": {
			Description: "Reviews code.", Prompt: "YOU ARE THE REVIEWER.", Tools: []string{"Read", "Grep"},
			Model: "haiku", Effort: "low", PermissionMode: agentloop.PermissionPlan, MaxTurns: 1,
			InitialPrompt: "Review the working tree.",
		}}}
	msgs, err := agentloop.Query(context.Background(), "", o).Collect()
	if err == nil {
		t.Fatal("the run should end at the agent's turn limit (1)")
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if res.Subtype != "error_max_turns" {
		t.Errorf("result %s, want error_max_turns (the agent's maxTurns)", res.Subtype)
	}
	r := srv.Requests()[0]
	sys := r.SystemText()
	if !strings.HasPrefix(sys, "YOU ARE THE REVIEWER.") || strings.Contains(sys, "You are agentloop") ||
		!strings.Contains(sys, "- working directory: "+cwd) || !strings.HasSuffix(sys, "APPENDED") {
		t.Errorf("system prompt:\n%s", sys)
	}
	if d := cmp.Diff([]string{"Grep", "Read"}, sortedCopy(toolNames(r))); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if !strings.Contains(r.Params.Model, "haiku") {
		t.Errorf("model = %s, want the agent's haiku", r.Params.Model)
	}
	if r.Params.Output == nil || r.Params.Output.Effort != "low" {
		t.Errorf("output_config = %+v, want effort low", r.Params.Output)
	}
	if got := r.Params.Messages[0].Content; got[len(got)-1].Text != "Review the working tree." {
		t.Errorf("first prompt = %+v, want the agent's initial prompt", got)
	}
	init := mcpInitOf(msgs).Init
	if init.PermissionMode != "plan" || !strings.Contains(init.Model, "haiku") || !slices.Contains(init.Agents, "reviewer") {
		t.Errorf("init: mode %s, model %s, agents %v", init.PermissionMode, init.Model, init.Agents)
	}
}

// TestMainAgentExplicitOptionsWin: the caller's own Model, Effort and
// SystemPrompt win over the agent's (a diagnostic says its prompt is not
// used), the agent's disallowed tools are removed, and a prompt given to
// Query wins over the initial prompt. Agents come from .claude/agents
// files too.
func TestMainAgentExplicitOptionsWin(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".claude", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := "---\nname: filer\ndescription: From a file.\nmodel: haiku\ndisallowedTools: Bash\ninitialPrompt: From the file.\n---\nFILE AGENT PROMPT\n"
	if err := os.WriteFile(filepath.Join(dir, "filer.md"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{settings.Project}, Agent: "filer",
		Model: "sonnet", SystemPrompt: "MINE", Tools: []string{"Bash", "Read"}}
	msgs, err := agentloop.Query(context.Background(), "my prompt", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.SystemText() != "MINE" || !strings.Contains(r.Params.Model, "sonnet") {
		t.Errorf("system %q, model %s", r.SystemText(), r.Params.Model)
	}
	if names := toolNames(r); slices.Contains(names, "Bash") || !slices.Contains(names, "Read") {
		t.Errorf("tools = %v, want Read without Bash", names)
	}
	if got := r.LastUserMessage().Content; got[len(got)-1].Text != "my prompt" {
		t.Errorf("prompt = %+v", got)
	}
	found := false
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && strings.Contains(d.Text, "prompt of agent filer") {
			found = true
		}
	}
	if !found {
		t.Error("no diagnostic says the agent's prompt is not used")
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestMainAgentFromSettings: the settings' "agent" key names the
// main-thread agent when Options.Agent is empty; an unknown name or a
// value of the wrong kind there is reported, and the run goes on.
func TestMainAgentFromSettings(t *testing.T) {
	for _, tc := range []struct {
		name, value, wantSys, wantDiag string
	}{
		{"known", `"chef"`, "YOU ARE CHEF-9.", ""},
		{"unknown", `"nobody"`, "", `no agent "nobody"`},
		{"not a string", `7`, "", "want an agent name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
			cwd := t.TempDir()
			if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(`{"agent":`+tc.value+`}`), 0o644); err != nil {
				t.Fatal(err)
			}
			o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, NoSessionPersistence: true,
				SettingSources: []settings.SettingSource{settings.Project},
				Agents:         map[string]agentloop.AgentDefinition{"chef": {Description: "Cooks.", Prompt: "YOU ARE CHEF-9."}}}
			var diags []string
			for m, err := range agentloop.Query(context.Background(), "cook", o) {
				if err != nil {
					t.Fatal(err)
				}
				if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagSettings {
					diags = append(diags, d.Text)
				}
			}
			sys := srv.Requests()[0].SystemText()
			if tc.wantSys != "" && !strings.HasPrefix(sys, tc.wantSys) {
				t.Errorf("system prompt %.200q, want the agent's", sys)
			}
			if tc.wantSys == "" && strings.Contains(sys, "CHEF-9") {
				t.Errorf("system prompt %.200q has the agent's prompt", sys)
			}
			if got := strings.Join(diags, "\n"); (tc.wantDiag == "") != (got == "") || !strings.Contains(got, tc.wantDiag) {
				t.Errorf("diagnostics %q, want one containing %q", got, tc.wantDiag)
			}
		})
	}
}
