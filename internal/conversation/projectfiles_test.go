package conversation_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// filesTree writes a project (a git repository) and a home with skills,
// commands and agents, points HOME at the home, and returns the project
// directory.
func filesTree(t *testing.T, extra map[string]string) string {
	t.Helper()
	home, cwd := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	files := map[string]string{
		filepath.Join(cwd, ".git/HEAD"):                             "ref: refs/heads/main\n",
		filepath.Join(cwd, ".claude/skills/pdf/SKILL.md"):           "---\nname: pdf\ndescription: Extract text from PDF files\n---\nRun scripts/extract.py on $ARGUMENTS.\n",
		filepath.Join(cwd, ".claude/skills/pdf/scripts/extract.py"): "print('x')\n",
		filepath.Join(cwd, ".claude/skills/secret/SKILL.md"):        "---\ndescription: Secret things\n---\nTHE SECRET BODY\n",
		filepath.Join(cwd, ".claude/commands/review.md"):            "---\ndescription: Review files\nargument-hint: <a> <b>\n---\nReview $ARGUMENTS: first=$0 second=$1\n",
		filepath.Join(cwd, ".claude/agents/x.md"):                   "---\nname: x\ndescription: The X agent\ntools: Read\nmodel: haiku\n---\nYou are the X agent.\n",
		filepath.Join(cwd, ".claude/agents/bad.md"):                 "---\nname: [bad\ndescription: broken\n---\nbody\n",
		filepath.Join(home, ".claude/skills/notes/SKILL.md"):        "---\ndescription: Take notes\n---\nWrite notes.\n",
	}
	for k, v := range extra {
		files[filepath.Join(cwd, k)] = v
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cwd
}

// runFiles runs prompt in cwd and returns the init message, the
// diagnostics and the user tool results of the stream.
func runFiles(t *testing.T, srv *agentlooptest.Server, cwd, prompt string, o *agentloop.Options) (*agentloop.SystemMessage, []agentloop.Diagnostic) {
	t.Helper()
	if o == nil {
		o = &agentloop.Options{}
	}
	o.Provider, o.Cwd = provider(t, srv, nil), cwd
	var init *agentloop.SystemMessage
	var diags []agentloop.Diagnostic
	for m, err := range agentloop.Query(context.Background(), prompt, o) {
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "init" && init == nil {
			init = s
		}
		if d, ok := agentloop.DiagnosticOf(m); ok {
			diags = append(diags, d)
		}
	}
	if init == nil || init.Init == nil {
		t.Fatal("no init message")
	}
	return init, diags
}

func hasDiag(ds []agentloop.Diagnostic, tag, text string) bool {
	return slices.ContainsFunc(ds, func(d agentloop.Diagnostic) bool { return d.Tag == tag && strings.Contains(d.Text, text) })
}

// TestProjectFilesDiscovered: skills, commands and agents from the project
// tree and the home appear in init and the skills are listed to the model
// with the Skill tool; a malformed agent file is a diagnostic, not an
// error.
func TestProjectFilesDiscovered(t *testing.T) {
	cwd := filesTree(t, nil)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	init, diags := runFiles(t, srv, filepath.Join(cwd), "hello", nil)
	got := map[string][]string{"skills": init.Init.Skills, "slash_commands": init.Init.SlashCommands, "agents": init.Init.Agents}
	want := map[string][]string{
		"skills":         {"notes", "pdf", "secret"},
		"slash_commands": append(conversation.BuiltinCommandNames(), "review", "notes", "pdf", "secret"),
		"agents":         {"general-purpose", "x"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("init lists (-want +got):\n%s", d)
	}
	if !hasDiag(diags, agentloop.DiagProjectFile, "bad.md is ignored: malformed frontmatter") {
		t.Errorf("no diagnostic for the malformed agent file: %+v", diags)
	}
	req := srv.Requests()[0]
	if !slices.Contains(req.ToolNames(), "Skill") {
		t.Errorf("tools %v lack Skill", req.ToolNames())
	}
	first := pfTextOf(req.Params.Messages[0].Content)
	for _, s := range []string{"- pdf: Extract text from PDF files", "- notes: Take notes"} {
		if !strings.Contains(first, s) {
			t.Errorf("first message lacks the skill listing %q:\n%s", s, first)
		}
	}
	if strings.Contains(first, "THE SECRET BODY") {
		t.Error("a skill body was sent before the skill was loaded")
	}
}

// resultText is the text of a tool_result block.
func pfResultText(c model.Content) string {
	if len(c.Blocks) > 0 {
		return pfTextOf(c.Blocks)
	}
	return c.Text
}

func pfTextOf(blocks []model.Content) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == model.TypeText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestSlashCommandHeader: as in the reference (testdata/conformance/
// t_slash_args), an invoked command's text follows a block naming the
// command and its arguments as typed.
func TestSlashCommandHeader(t *testing.T) {
	cwd := filesTree(t, nil)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	runFiles(t, srv, cwd, "/review foo bar", nil)
	var texts []string
	for _, b := range srv.Requests()[0].LastUserMessage().Content {
		if b.Type == "text" && !strings.HasPrefix(b.Text, "<system-reminder>") {
			texts = append(texts, b.Text)
		}
	}
	want := []string{"<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args>foo bar</command-args>\n",
		"Review foo bar: first=foo second=bar"}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("user turn's texts (-want +got):\n%s", diff)
	}
}

// TestSlashCommandExpansion: a file command's $ARGUMENTS, $0 and $1 are
// filled in; an unknown /word and the built-in names are sent as typed.
func TestSlashCommandExpansion(t *testing.T) {
	cwd := filesTree(t, nil)
	for _, tt := range []struct{ prompt, want string }{
		{"/review foo bar", "Review foo bar: first=foo second=bar"},
		{"/nosuch foo", "/nosuch foo"},
		{"/pdf a.pdf", "Run scripts/extract.py on a.pdf."},
	} {
		t.Run(tt.prompt, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			runFiles(t, srv, cwd, tt.prompt, nil)
			got := srv.Requests()[0].LastUserText()
			if !strings.Contains(got, tt.want) {
				t.Errorf("prompt sent:\n%s\nwant it to contain %q", got, tt.want)
			}
			if tt.want != tt.prompt && strings.Contains(got, tt.prompt) {
				t.Errorf("the unexpanded prompt %q was sent too", tt.prompt)
			}
		})
	}
}

// TestSkillToolLoadsBody: as in the reference (testdata/conformance/
// t_skill), the model's Skill call returns "Launching skill: <name>" and
// the body, args filled in, with the skill's directory and its supporting
// files, follows the tool results in the same user turn, shown in the
// stream as a synthetic user message that counts as a turn.
func TestSkillToolLoadsBody(t *testing.T) {
	cwd := filesTree(t, nil)
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Skill", map[string]any{"skill": "pdf", "args": "report.pdf"}),
		agentlooptest.Text("done"))
	var msgs []agentloop.Message
	for m, err := range agentloop.Query(context.Background(), "extract it", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd}) {
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	res, ok := srv.Requests()[1].ToolResult("toolu_1")
	if !ok {
		t.Fatal("no Skill result")
	}
	if text := pfResultText(res); text != "Launching skill: pdf" || (res.IsError != nil && *res.IsError) {
		t.Fatalf("Skill result = %q (error %v), want %q", text, res.IsError, "Launching skill: pdf")
	}
	last := srv.Requests()[1].LastUserMessage().Content
	follow := last[len(last)-1]
	if follow.Type != "text" || last[0].Type != "tool_result" {
		t.Fatalf("last user turn = %+v, want the tool result, then the skill's text", last)
	}
	for _, s := range []string{"Run scripts/extract.py on report.pdf.", "Base directory for this skill: " + filepath.Join(cwd, ".claude/skills/pdf"), "scripts/extract.py"} {
		if !strings.Contains(follow.Text, s) {
			t.Errorf("skill text lacks %q:\n%s", s, follow.Text)
		}
	}
	var synthetic int
	for _, m := range msgs {
		if u, ok := m.(*agentloop.UserMessage); ok && u.IsSynthetic && strings.Contains(fmt.Sprint(u.Message.Content), "Run scripts/extract.py") {
			synthetic++
		}
	}
	result := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if synthetic != 1 || result.NumTurns != 3 {
		t.Errorf("%d synthetic user messages with the skill's text, num_turns %d; want 1 and 3", synthetic, result.NumTurns)
	}
}

// TestSkillDenyRule: a Skill(secret) deny rule makes the call an is_error
// result and the body never reaches the model.
func TestSkillDenyRule(t *testing.T) {
	cwd := filesTree(t, nil)
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Skill", map[string]any{"skill": "secret"}),
		agentlooptest.Text("done"))
	_, diags := runFiles(t, srv, cwd, "go", &agentloop.Options{DisallowedTools: []string{"Skill(secret)"}})
	res, ok := srv.Requests()[1].ToolResult("toolu_1")
	if !ok || res.IsError == nil || !*res.IsError {
		t.Fatalf("Skill(secret) result = %+v, want is_error", res)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), "THE SECRET BODY") {
			t.Error("the denied skill's body was sent to the model")
		}
	}
	if hasDiag(diags, agentloop.DiagRule, "Skill(secret)") {
		t.Errorf("the Skill(secret) rule was reported as inert: %+v", diags)
	}
}

// TestSkillAllowedToolsGranted: once a skill is loaded, its allowed-tools
// are allow rules: a Write that default mode would refuse (nobody to ask)
// runs.
func TestSkillAllowedToolsGranted(t *testing.T) {
	cwd := filesTree(t, map[string]string{
		".claude/skills/mk/SKILL.md": "---\ndescription: Make marker files\nallowed-tools: Read, Write\n---\nTouch the marker.\n",
	})
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Skill", map[string]any{"skill": "mk"}),
		agentlooptest.ToolUse("toolu_2", "Write", map[string]any{"file_path": filepath.Join(cwd, "marker"), "content": "x"}),
		agentlooptest.Text("done"))
	runFiles(t, srv, cwd, "go", nil)
	if res, _ := srv.Requests()[2].ToolResult("toolu_2"); res.IsError != nil && *res.IsError {
		t.Errorf("Write after the skill was refused: %s", pfResultText(res))
	}
	if _, err := os.Stat(filepath.Join(cwd, "marker")); err != nil {
		t.Errorf("the granted command did not run: %v", err)
	}
}

// TestFileAgentUsed: the Agent tool runs .claude/agents/x.md with its
// prompt, tools and model; Options.Agents wins over it by name.
func TestFileAgentUsed(t *testing.T) {
	for _, tt := range []struct {
		name       string
		agents     map[string]agentloop.AgentDefinition
		wantPrompt string
		wantTools  []string
		wantModel  string
	}{
		{"file", nil, "You are the X agent.", []string{"Read"}, pricing.Resolve("haiku")},
		{"options win", map[string]agentloop.AgentDefinition{"x": {Description: "prog", Prompt: "Programmatic X.", Tools: []string{"Glob"}}},
			"Programmatic X.", []string{"Glob"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cwd := filesTree(t, nil)
			srv := agentlooptest.NewTB(t,
				agentlooptest.ToolUse("toolu_1", "Agent", map[string]any{"description": "d", "prompt": "look", "subagent_type": "x"}),
				agentlooptest.Text("sub report"),
				agentlooptest.Text("done"))
			_, diags := runFiles(t, srv, cwd, "go", &agentloop.Options{Agents: tt.agents, Tools: []string{"Read", "Glob", "Agent"}})
			sub := srv.Requests()[1]
			if !strings.Contains(sub.SystemText(), tt.wantPrompt) {
				t.Errorf("subagent system prompt lacks %q:\n%s", tt.wantPrompt, sub.SystemText())
			}
			if d := cmp.Diff(tt.wantTools, sub.ToolNames()); d != "" {
				t.Errorf("subagent tools (-want +got):\n%s", d)
			}
			want := tt.wantModel
			if want == "" {
				want = srv.Requests()[0].Params.Model
			}
			if sub.Params.Model != want {
				t.Errorf("subagent model = %q, want %q", sub.Params.Model, want)
			}
			if tt.agents != nil && !hasDiag(diags, agentloop.DiagProjectFile, "Options.Agents defines an agent of the same name") {
				t.Errorf("the shadowed file agent was not reported: %+v", diags)
			}
		})
	}
}

// TestAgentPermissionModeBounded: an agent may narrow its mode (plan: its
// Bash write is refused) but not widen it (bypassPermissions under a
// default parent is reported and refused).
func TestAgentPermissionModeBounded(t *testing.T) {
	cwd := filesTree(t, map[string]string{
		".claude/agents/wide.md": "---\ndescription: wants bypass\npermissionMode: bypassPermissions\n---\nYou are wide.\n",
	})
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Agent", map[string]any{"description": "d", "prompt": "touch it", "subagent_type": "wide"}),
		agentlooptest.ToolUse("toolu_s", "Bash", map[string]any{"command": "touch wide-marker"}),
		agentlooptest.Text("sub report"),
		agentlooptest.Text("done"))
	_, diags := runFiles(t, srv, cwd, "go", &agentloop.Options{Tools: []string{"Bash", "Agent"}})
	if _, err := os.Stat(filepath.Join(cwd, "wide-marker")); err == nil {
		t.Error("the subagent escalated to bypassPermissions")
	}
	if !hasDiag(diags, agentloop.DiagAgent, "may not allow more than its parent") {
		t.Errorf("no diagnostic for the refused mode: %+v", diags)
	}
}

// TestAgentPreloadsSkills: an agent's skills reach its first message; its
// mcpServers are reported as not honoured.
func TestAgentPreloadsSkills(t *testing.T) {
	cwd := filesTree(t, map[string]string{
		".claude/agents/reader.md": "---\ndescription: reads PDFs\nskills: [pdf]\nmcpServers: [files]\n---\nYou read.\n",
	})
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Agent", map[string]any{"description": "d", "prompt": "read", "subagent_type": "reader"}),
		agentlooptest.Text("sub report"),
		agentlooptest.Text("done"))
	_, diags := runFiles(t, srv, cwd, "go", nil)
	first := pfTextOf(srv.Requests()[1].Params.Messages[0].Content)
	if !strings.Contains(first, "Run scripts/extract.py on") {
		t.Errorf("the subagent's first message lacks the preloaded skill:\n%s", first)
	}
	if !hasDiag(diags, agentloop.DiagAgent, "agent reader: not honoured: mcpServers") {
		t.Errorf("mcpServers not reported: %+v", diags)
	}
}

// TestSkillFilesRespectReadDeny: a skill, command or agent file that a
// Read deny rule covers never reaches the model: not listed, not loadable,
// reported.
func TestSkillFilesRespectReadDeny(t *testing.T) {
	cwd := filesTree(t, map[string]string{
		".claude/settings.json": `{"permissions":{"deny":["Read(.claude/skills/secret/**)","Read(.claude/commands/**)"]}}`,
	})
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Skill", map[string]any{"skill": "secret"}),
		agentlooptest.Text("done"))
	init, diags := runFiles(t, srv, cwd, "go", nil)
	if slices.Contains(init.Init.Skills, "secret") || slices.Contains(init.Init.SlashCommands, "review") {
		t.Errorf("denied files listed: skills %q commands %q", init.Init.Skills, init.Init.SlashCommands)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), "THE SECRET BODY") || strings.Contains(string(r.Body), "Secret things") {
			t.Error("the denied skill reached the model")
		}
	}
	if !hasDiag(diags, agentloop.DiagProjectFile, "Read deny rule") {
		t.Errorf("no diagnostic for the denied files: %+v", diags)
	}
}

// TestSkillTextSurvivesResume: the skill's text, sent after the tool
// results, is in the transcript, so a resumed session sends the same turn
// again: the tool result, then the text.
func TestSkillTextSurvivesResume(t *testing.T) {
	cwd := filesTree(t, nil)
	cfg := t.TempDir()
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Skill", map[string]any{"skill": "pdf", "args": "report.pdf"}),
		agentlooptest.Text("done"),
		agentlooptest.Text("again"))
	first, err := agentloop.Query(context.Background(), "extract it", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agentloop.Query(context.Background(), "and now?", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Resume: first.SessionID}).Result(); err != nil {
		t.Fatal(err)
	}
	live, resumed := srv.Requests()[1].Params.Messages, srv.Requests()[2].Params.Messages
	turn := func(h []model.Message) []model.Content {
		for _, m := range h {
			for _, c := range m.Content {
				if c.Type == "tool_result" && c.ToolUseID == "toolu_1" {
					return m.Content
				}
			}
		}
		return nil
	}
	// Only the cache breakpoint moves on.
	if diff := cmp.Diff(turn(live), turn(resumed), cmpopts.IgnoreFields(model.Content{}, "CacheControl")); diff != "" || len(turn(live)) < 2 {
		t.Errorf("the Skill turn after resume differs (-live +resumed):\n%s", diff)
	}
}
