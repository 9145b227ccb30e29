package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// memoryTree builds a home directory (HOME for the test) with a user
// CLAUDE.md, and in it a git repository with a CLAUDE.md whose imports
// include a cycle and a missing file; the working directory is a
// subdirectory of the repository with CLAUDE.md, .claude/CLAUDE.md and
// CLAUDE.local.md. It returns the working directory and the paths of the
// files in the order they must appear.
func memoryTree(t *testing.T) (cwd string, order []string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	repo := filepath.Join(home, "repo")
	files := []struct{ path, text string }{
		{".claude/CLAUDE.md", "USER-RULES"},
		{"repo/CLAUDE.md", "REPO-RULES, see @docs/a.md and @docs/gone.md"},
		{"repo/docs/a.md", "IMPORT-A, then @b.md"},
		{"repo/docs/b.md", "IMPORT-B, back to @a.md"},
		{"repo/sub/CLAUDE.md", "SUB-RULES"},
		{"repo/sub/.claude/CLAUDE.md", "SUB-DOT-CLAUDE-RULES"},
		{"repo/sub/CLAUDE.local.md", "LOCAL-RULES"},
	}
	for _, f := range files {
		p := filepath.Join(home, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		order = append(order, p)
	}
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(repo, "sub"), order
}

// contentsLines returns the "Contents of <path> (<kind>):" lines of text.
func contentsLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "Contents of ") {
			out = append(out, l)
		}
	}
	return out
}

// allUserText joins the text blocks of every user message of a request.
func allUserText(r *agentlooptest.Request) string {
	var b strings.Builder
	for _, m := range r.Params.Messages {
		if m.Role != "user" {
			continue
		}
		for _, c := range m.Content {
			if c.Type == model.TypeText {
				b.WriteString(c.Text + "\n")
			}
		}
	}
	return b.String()
}

// TestClaudeMdInFirstUserMessage: the CLAUDE.md files of every source
// reach the model once, as one <system-reminder> block before the prompt
// in the first user message, in the reference's order and form; imports
// follow their importer; the missing import and the cycle are reported.
func TestClaudeMdInFirstUserMessage(t *testing.T) {
	cwd, files := memoryTree(t)
	home := os.Getenv("HOME")
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Read", map[string]any{"file_path": filepath.Join(cwd, "CLAUDE.md")}),
		agentlooptest.Text("done"))
	msgs, err := agentloop.Query(context.Background(), "what are the rules?", &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Read"}}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	first := reqs[0].Params.Messages[0]
	if first.Role != "user" || len(first.Content) != 2 || first.Content[1].Text != "what are the rules?" {
		t.Fatalf("first user message = %+v", first)
	}
	block := first.Content[0].Text
	if !strings.HasPrefix(block, "<system-reminder>\n") || !strings.HasSuffix(block, "\n</system-reminder>") {
		t.Errorf("block is not one system-reminder:\n%s", block)
	}
	const (
		proj  = "project instructions, checked into the codebase"
		local = "user's private project instructions, not checked in"
		user  = "user's private global instructions for all projects"
	)
	want := []string{
		"Contents of " + files[0] + " (" + user + "):",
		"Contents of " + files[1] + " (" + proj + "):",
		"Contents of " + files[2] + " (" + proj + "):",
		"Contents of " + files[3] + " (" + proj + "):",
		"Contents of " + files[4] + " (" + proj + "):",
		"Contents of " + files[5] + " (" + proj + "):",
		"Contents of " + files[6] + " (" + local + "):",
	}
	if d := cmp.Diff(want, contentsLines(block)); d != "" {
		t.Errorf("Contents lines (-want +got):\n%s", d)
	}
	for _, s := range []string{"USER-RULES", "REPO-RULES", "IMPORT-A", "IMPORT-B", "SUB-RULES", "SUB-DOT-CLAUDE-RULES", "LOCAL-RULES"} {
		if n := strings.Count(block, s); n != 1 {
			t.Errorf("%s appears %d times", s, n)
		}
		if !strings.Contains(block, "Contents of ") || !strings.Contains(block, ":\n\n"+s) {
			t.Errorf("%s does not follow its Contents line", s)
		}
	}
	// Later requests carry the block once: in the history, not again.
	if n := strings.Count(allUserText(reqs[1]), "Contents of "+files[0]); n != 1 {
		t.Errorf("second request holds the user file %d times", n)
	}
	if d := cmp.Diff(first, reqs[1].Params.Messages[0], cmpopts.IgnoreFields(model.Content{}, "CacheControl")); d != "" {
		t.Errorf("the first message changed (-first +second):\n%s", d)
	}
	var diags []string
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagMemory {
			diags = append(diags, d.Text)
		}
	}
	joined := strings.Join(diags, "\n")
	if len(diags) != 2 || !strings.Contains(joined, "@docs/gone.md in "+files[1]+" is left out: "+filepath.Join(home, "repo/docs/gone.md")+": no such file") ||
		!strings.Contains(joined, "@a.md in "+files[3]+" is left out: it leads back to "+files[2]+", a cycle") {
		t.Errorf("memory diagnostics:\n%s", joined)
	}
}

// TestClaudeMdNotRepeatedOnNextPrompt: a Client's second prompt does not
// send the block again.
func TestClaudeMdNotRepeatedOnNextPrompt(t *testing.T) {
	cwd, files := memoryTree(t)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"))
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []string{"first", "second"} {
		if _, err := c.Query(context.Background(), p).Result(); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if n := strings.Count(allUserText(reqs[1]), "Contents of "+files[0]); n != 1 {
		t.Errorf("the second prompt's request holds the user file %d times", n)
	}
	if last := reqs[1].Params.Messages[len(reqs[1].Params.Messages)-1]; len(last.Content) != 1 || last.Content[0].Text != "second" {
		t.Errorf("second prompt message = %+v", last)
	}
}

// TestClaudeMdSettingSources: the setting sources select the files.
func TestClaudeMdSettingSources(t *testing.T) {
	cwd, _ := memoryTree(t)
	for _, tc := range []struct {
		name    string
		sources []settings.SettingSource
		want    []string // markers present; the others must be absent
	}{
		{"nil loads all", nil, []string{"USER-RULES", "REPO-RULES", "SUB-RULES", "SUB-DOT-CLAUDE-RULES", "IMPORT-A", "LOCAL-RULES"}},
		{"empty loads none", []settings.SettingSource{}, nil},
		{"user only", []settings.SettingSource{settings.User}, []string{"USER-RULES"}},
		{"project only", []settings.SettingSource{settings.Project}, []string{"REPO-RULES", "SUB-RULES", "SUB-DOT-CLAUDE-RULES", "IMPORT-A"}},
		{"local only", []settings.SettingSource{settings.Local}, []string{"LOCAL-RULES"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			if _, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{Provider: provider(t, srv, nil),
				Cwd: cwd, Tools: []string{}, SettingSources: tc.sources}).Result(); err != nil {
				t.Fatal(err)
			}
			first := srv.Requests()[0].Params.Messages[0]
			if tc.want == nil {
				if len(first.Content) != 1 || first.Content[0].Text != "hi" {
					t.Errorf("first message = %+v, want the prompt alone", first)
				}
				return
			}
			text := first.Content[0].Text
			for _, m := range []string{"USER-RULES", "REPO-RULES", "SUB-RULES", "SUB-DOT-CLAUDE-RULES", "IMPORT-A", "LOCAL-RULES"} {
				has := strings.Contains(text, m)
				wanted := false
				for _, w := range tc.want {
					wanted = wanted || w == m
				}
				if has != wanted {
					t.Errorf("%s present = %v, want %v", m, has, wanted)
				}
			}
		})
	}
}

// TestClaudeMdExcludes: claudeMdExcludes in the settings leaves files out.
func TestClaudeMdExcludes(t *testing.T) {
	cwd, _ := memoryTree(t)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	if _, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{Provider: provider(t, srv, nil),
		Cwd: cwd, Tools: []string{}, Settings: `{"claudeMdExcludes":["**/repo/CLAUDE.md","**/.claude/CLAUDE.md"]}`}).Result(); err != nil {
		t.Fatal(err)
	}
	text := srv.Requests()[0].Params.Messages[0].Content[0].Text
	for m, want := range map[string]bool{"REPO-RULES": false, "IMPORT-A": false, "USER-RULES": false, "SUB-DOT-CLAUDE-RULES": false,
		"SUB-RULES": true, "LOCAL-RULES": true} {
		if strings.Contains(text, m) != want {
			t.Errorf("%s present = %v, want %v", m, !want, want)
		}
	}
}

// TestSubagentGetsClaudeMd: a subagent's first request holds the same
// block before its task.
func TestSubagentGetsClaudeMd(t *testing.T) {
	cwd, files := memoryTree(t)
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "look", "prompt": "Look around."}),
		agentlooptest.Text("Looked."),
		agentlooptest.Text("done"))
	if _, err := agentloop.Query(context.Background(), "delegate", &agentloop.Options{Provider: provider(t, srv, nil),
		Cwd: cwd, Tools: []string{"Agent", "Read"}}).Result(); err != nil {
		t.Fatal(err)
	}
	main, sub := srv.Requests()[0].Params.Messages[0], srv.Requests()[1].Params.Messages[0]
	if len(sub.Content) != 2 || sub.Content[1].Text != "Look around." {
		t.Fatalf("subagent's first message = %+v", sub)
	}
	if sub.Content[0].Text != main.Content[0].Text || !strings.Contains(sub.Content[0].Text, "Contents of "+files[4]) {
		t.Errorf("subagent's context differs from the main loop's:\n%s", sub.Content[0].Text)
	}
}

// TestSystemPromptEnvironment: agentloop's prompt names the working
// directory, whether it is a git repository, the platform, shell, OS,
// date and model; SystemPrompt and AppendSystemPrompt keep working.
func TestSystemPromptEnvironment(t *testing.T) {
	t.Setenv("SHELL", "/bin/test-shell")
	repo, _ := memoryTree(t)
	plain := t.TempDir()
	for _, tc := range []struct {
		cwd, git string
	}{{repo, "yes"}, {plain, "no"}} {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		if _, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{Provider: provider(t, srv, nil),
			Cwd: tc.cwd, Tools: []string{}, Model: "sonnet", SettingSources: []settings.SettingSource{}}).Result(); err != nil {
			t.Fatal(err)
		}
		r := srv.Requests()[0]
		sys := r.SystemText()
		for _, want := range []string{"You are agentloop", "- working directory: " + tc.cwd + "\n", "- git repository: " + tc.git + "\n",
			"- platform: " + runtime.GOOS + "/" + runtime.GOARCH + "\n", "- shell: /bin/test-shell\n", "- OS version: ",
			"- date: " + time.Now().Format("2006-01-02"), "- model: " + r.Params.Model} {
			if !strings.Contains(sys, want) {
				t.Errorf("system prompt lacks %q:\n%s", want, sys)
			}
		}
	}
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	if _, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: plain,
		Tools: []string{}, SystemPrompt: "CUSTOM", AppendSystemPrompt: "APPENDED", SettingSources: []settings.SettingSource{}}).Result(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range srv.Requests()[0].Params.System {
		got = append(got, b.Text)
	}
	if d := cmp.Diff([]string{"CUSTOM", "APPENDED"}, got); d != "" {
		t.Errorf("custom system prompt (-want +got):\n%s", d)
	}
}

// TestExcludeDynamicSystemPrompt: with ExcludeDynamicSystemPrompt the
// system prompt is the same in two sessions in different directories,
// and the environment comes in the first user message instead.
func TestExcludeDynamicSystemPrompt(t *testing.T) {
	run := func(cwd string, exclude bool) *agentlooptest.Request {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		if _, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
			Tools: []string{}, AppendSystemPrompt: "APPENDED", ExcludeDynamicSystemPrompt: exclude,
			SettingSources: []settings.SettingSource{}}).Result(); err != nil {
			t.Fatal(err)
		}
		return srv.Requests()[0]
	}
	a, b := t.TempDir(), t.TempDir()
	ra, rb := run(a, true), run(b, true)
	if d := cmp.Diff(ra.Params.System, rb.Params.System); d != "" {
		t.Errorf("system prompts differ across sessions (-a +b):\n%s", d)
	}
	if strings.Contains(ra.SystemText(), a) || !strings.Contains(ra.SystemText(), "APPENDED") {
		t.Errorf("system prompt:\n%s", ra.SystemText())
	}
	first := ra.Params.Messages[0]
	if len(first.Content) != 2 || !strings.HasPrefix(first.Content[0].Text, "<system-reminder>") ||
		!strings.Contains(first.Content[0].Text, "- working directory: "+a+"\n") || first.Content[1].Text != "hi" {
		t.Errorf("first message = %+v", first)
	}
	if ca, cb := run(a, false), run(b, false); cmp.Equal(ca.Params.System, cb.Params.System) || len(ca.Params.Messages[0].Content) != 1 {
		t.Error("without the option the system prompt must carry the environment, and the first message only the prompt")
	}

	// With a custom prompt the option does nothing, and says so.
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	msgs, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: a,
		Tools: []string{}, SystemPrompt: "CUSTOM", ExcludeDynamicSystemPrompt: true, SettingSources: []settings.SettingSource{}}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagOption && strings.Contains(d.Text, "ExcludeDynamicSystemPrompt") {
			found = true
		}
	}
	if !found || len(srv.Requests()[0].Params.Messages[0].Content) != 1 {
		t.Errorf("custom prompt with the option: diagnostic %v, first message %+v", found, srv.Requests()[0].Params.Messages[0])
	}
}

// TestClaudeMdSurvivesResume: the block is part of the recorded history,
// so a resumed session sends it again, once, and lists its prompt (not the
// block) as the session's first prompt.
func TestClaudeMdSurvivesResume(t *testing.T) {
	cwd, files := memoryTree(t)
	cfg := t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"))
	base := func() *agentloop.Options {
		return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{}}
	}
	first, err := agentloop.Query(context.Background(), "first", base()).Result()
	if err != nil {
		t.Fatal(err)
	}
	o := base()
	o.Resume = first.SessionID
	if _, err := agentloop.Query(context.Background(), "second", o).Result(); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[1]
	if n := strings.Count(allUserText(r), "Contents of "+files[0]); n != 1 {
		t.Errorf("resumed request holds the user file %d times", n)
	}
	if h := r.Params.Messages; len(h) != 3 || len(h[0].Content) != 2 || h[0].Content[1].Text != "first" {
		t.Errorf("resumed history = %+v", h)
	}
}

// TestClaudeMdRespectsReadDeny: a CLAUDE.md import never sends the model
// a file a Read deny rule covers, nor (from a project file) one outside
// the project; both are reported.
func TestClaudeMdRespectsReadDeny(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	repo := filepath.Join(home, "repo")
	for p, text := range map[string]string{
		".claude/CLAUDE.md":          "USER-RULES @~/vault/token.md",
		"vault/token.md":             "DENIED-TOKEN",
		".ssh/id_rsa":                "SSH-KEY",
		"repo/CLAUDE.md":             "REPO-RULES @~/.ssh/id_rsa",
		"repo/.claude/settings.json": `{"permissions":{"deny":["Read(~/vault/**)"]}}`,
	} {
		full := filepath.Join(home, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	var diags []string
	for m, err := range agentloop.Query(context.Background(), "go", &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: repo, Tools: []string{"Read"}, NoSessionPersistence: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := agentloop.DiagnosticOf(m); ok {
			diags = append(diags, d.Text)
		}
	}
	text := allUserText(srv.Requests()[0])
	if !strings.Contains(text, "USER-RULES") || !strings.Contains(text, "REPO-RULES") {
		t.Fatalf("the CLAUDE.md files are missing:\n%s", text)
	}
	for _, banned := range []string{"DENIED-TOKEN", "SSH-KEY"} {
		if strings.Contains(text, banned) {
			t.Errorf("the request carries %s", banned)
		}
	}
	all := strings.Join(diags, "\n")
	for _, want := range []string{"token.md", "id_rsa"} {
		if !strings.Contains(all, want) {
			t.Errorf("no diagnostic names %s: %q", want, diags)
		}
	}
}
