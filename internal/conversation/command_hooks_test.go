package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/pricing"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// promptHookLog records the prompt-side hooks of a session.
type promptHookLog struct {
	mu         sync.Mutex
	submits    []string
	expansions []hooks.UserPromptExpansionInput
	other      []string // PreCompact, SessionEnd
}

// matchers blocks every UserPromptSubmit prompt that starts with "/"
// when blockSlash is set; the UserPromptExpansion hook (matcher
// expansionMatcher) answers with out.
func (l *promptHookLog) matchers(blockSlash bool, expansionMatcher string, out hooks.Output) map[hooks.Event][]hooks.Matcher {
	rec := func(ev string) hooks.Callback {
		return func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			l.mu.Lock()
			l.other = append(l.other, ev)
			l.mu.Unlock()
			return hooks.Output{}, nil
		}
	}
	return map[hooks.Event][]hooks.Matcher{
		hooks.UserPromptSubmit: {{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			p := in.(hooks.UserPromptSubmitInput).Prompt
			l.mu.Lock()
			l.submits = append(l.submits, p)
			l.mu.Unlock()
			if blockSlash && strings.HasPrefix(p, "/") {
				return hooks.Output{Decision: "block", Reason: "HELD-BY-HOOK"}, nil
			}
			return hooks.Output{}, nil
		}}}},
		hooks.UserPromptExpansion: {{Matcher: expansionMatcher, Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			l.mu.Lock()
			l.expansions = append(l.expansions, in.(hooks.UserPromptExpansionInput))
			l.mu.Unlock()
			return out, nil
		}}}},
		hooks.PreCompact: {{Hooks: []hooks.Callback{rec("PreCompact")}}},
		hooks.SessionEnd: {{Hooks: []hooks.Callback{rec("SessionEnd")}}},
	}
}

// TestUserPromptSubmitSeesSlashCommands: UserPromptSubmit runs for every
// prompt as typed, built-in commands, file commands, skills and unknown
// "/word"s included, and its block keeps any of them from running.
func TestUserPromptSubmitSeesSlashCommands(t *testing.T) {
	for _, p := range []string{"/compact keep it short", "/clear", "/new", "/review a b", "/pdf x.pdf", "/nosuch word"} {
		t.Run(p, func(t *testing.T) {
			cwd := filesTree(t, nil)
			srv := agentlooptest.NewTB(t, agentlooptest.Text("Hello."))
			var log promptHookLog
			c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir(),
				Hooks: log.matchers(true, "", hooks.Output{})})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if _, err := c.Query(ctx, "hello").Result(); err != nil {
				t.Fatal(err)
			}
			id := c.SessionID()
			msgs, err := c.Query(ctx, p).Collect()
			if err != nil {
				t.Fatal(err)
			}
			// The reference's ending of a blocked prompt (TestHooksInTheLoop).
			res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
			if res.IsError || !strings.Contains(res.Text(), "HELD-BY-HOOK") || !strings.HasSuffix(res.Text(), "Original prompt: "+p) {
				t.Errorf("result %s %q", res.Subtype, res.Text())
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests; the blocked %s sent something", n, p)
			}
			if len(resetOf(msgs)) != 0 || c.SessionID() != id {
				t.Error("a blocked /clear reset the conversation")
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			if diff := cmp.Diff([]string{"hello", p}, log.submits); diff != "" {
				t.Errorf("UserPromptSubmit prompts (-want +got):\n%s", diff)
			}
			if len(log.expansions) != 0 || len(log.other) != 0 {
				t.Errorf("hooks ran after the block: expansions %d, %v", len(log.expansions), log.other)
			}
		})
	}
}

// TestUserPromptExpansionHook: a file command or a skill invoked as
// "/name" goes through UserPromptExpansion (matched on the command name)
// after UserPromptSubmit; its context goes with the expanded prompt, and
// its block keeps the command from running.
func TestUserPromptExpansionHook(t *testing.T) {
	cwd := filesTree(t, nil)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Reviewed."), agentlooptest.Text("Plain."))
	var log promptHookLog
	out := hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{AdditionalContext: "CTX-FROM-EXPANSION"}}
	o := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir(),
		Hooks: log.matchers(false, "review", out)}
	if _, err := agentloop.Query(context.Background(), "/review foo bar", o).Result(); err != nil {
		t.Fatal(err)
	}
	sent := allUserText(srv.Requests()[0])
	if !strings.Contains(sent, "Review foo bar: first=foo second=bar") || !strings.Contains(sent, "CTX-FROM-EXPANSION") {
		t.Errorf("request: %.400s", sent)
	}
	// Not matched: the skill /pdf expands without the hook.
	if _, err := agentloop.Query(context.Background(), "/pdf a.pdf", o).Result(); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	if diff := cmp.Diff([]string{"/review foo bar", "/pdf a.pdf"}, log.submits); diff != "" {
		t.Errorf("UserPromptSubmit prompts (-want +got):\n%s", diff)
	}
	if len(log.expansions) != 1 {
		t.Fatalf("%d expansion hooks ran, want 1", len(log.expansions))
	}
	in := log.expansions[0]
	in.Base = hooks.Base{}
	want := hooks.UserPromptExpansionInput{ExpansionType: "slash_command", CommandName: "review", CommandArgs: "foo bar",
		CommandSource: "project", Prompt: "/review foo bar"}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("expansion input (-want +got):\n%s", diff)
	}
	log.mu.Unlock()

	// A block: nothing is sent.
	before := len(srv.Requests())
	o.Hooks = new(promptHookLog).matchers(false, "pdf", hooks.Output{Decision: "block", Reason: "NO-PDF-TODAY"})
	res, err := agentloop.Query(context.Background(), "/pdf a.pdf", o).Result()
	// Ended as a blocked UserPromptSubmit is (see TestHookGlue), naming
	// this hook point.
	if want := "UserPromptExpansion operation blocked by hook:\nNO-PDF-TODAY\n\nOriginal prompt: /pdf a.pdf"; err != nil || res == nil || res.Text() != want {
		t.Errorf("blocked expansion: %v %+v, want the text %q", err, res, want)
	}
	if len(srv.Requests()) != before {
		t.Error("a blocked expansion sent a request")
	}
}

// TestCommandFrontmatterForItsTurn: a file command's model and
// allowed-tools hold for the run of its prompt only.
func TestCommandFrontmatterForItsTurn(t *testing.T) {
	cwd := filesTree(t, map[string]string{
		".claude/commands/fast.md": "---\ndescription: Answer quickly\nmodel: haiku\n---\nAnswer fast: $ARGUMENTS\n",
		".claude/commands/mk.md":   "---\nallowed-tools: Write\ndisable-model-invocation: true\n---\nMake the marker.\n",
	})
	srv := agentlooptest.NewTB(t,
		agentlooptest.Text("Quick."),
		agentlooptest.Text("Normal."),
		agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": filepath.Join(cwd, "m1"), "content": "x"}),
		agentlooptest.Text("made"),
		agentlooptest.ToolUse("toolu_2", "Write", map[string]any{"file_path": filepath.Join(cwd, "m2"), "content": "x"}),
		agentlooptest.Text("refused"))
	var diags []agentloop.Diagnostic
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir(),
		Model: "sonnet"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for _, p := range []string{"/fast why", "and now?", "/mk", "write m2"} {
		for m, err := range c.Query(ctx, p) {
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if d, ok := agentloop.DiagnosticOf(m); ok {
				diags = append(diags, d)
			}
		}
	}
	reqs := srv.Requests()
	if got, want := reqs[0].Params.Model, pricing.Resolve("haiku"); got != want {
		t.Errorf("/fast ran on %s, want %s", got, want)
	}
	if got, want := reqs[1].Params.Model, pricing.Resolve("sonnet"); got != want || c.Model() != want {
		t.Errorf("after /fast the model is %s (client %s), want %s", got, c.Model(), want)
	}
	if _, err := os.Stat(filepath.Join(cwd, "m1")); err != nil {
		t.Errorf("/mk's allowed Write did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "m2")); err == nil {
		t.Error("Write ran after /mk's turn: its allowed-tools outlived it")
	}
	if !hasDiag(diags, agentloop.DiagProjectFile, "disable-model-invocation") {
		t.Errorf("the unknown frontmatter key is not reported: %+v", diags)
	}
	if hasDiag(diags, agentloop.DiagProjectFile, "not honoured; the expanded prompt runs") {
		t.Error("allowed-tools and model are still reported as not honoured")
	}
}

// TestSupportedCommands: the built-in commands, then the file commands
// with their description and argument-hint, then the skills.
func TestSupportedCommands(t *testing.T) {
	cwd := filesTree(t, nil)
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, agentlooptest.NewTB(t), nil), Cwd: cwd, ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := c.SupportedCommands()
	byName := map[string]agentloop.SlashCommand{}
	var names []string
	for _, sc := range got {
		byName[sc.Name] = sc
		names = append(names, sc.Name)
	}
	if diff := cmp.Diff(append(conversation.BuiltinCommandNames(), "review", "notes", "pdf", "secret"), names,
		cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if nb := len(conversation.BuiltinCommandNames()); names[0] != "compact" || names[1] != "clear" || names[nb] != "review" {
		t.Errorf("order %v", names)
	}
	if r := byName["review"]; r.Description != "Review files" || r.ArgumentHint != "<a> <b>" || r.Builtin {
		t.Errorf("review %+v", r)
	}
	if cl := byName["clear"]; !cl.Builtin || !slices.Equal(cl.Aliases, []string{"reset", "new"}) {
		t.Errorf("clear %+v", cl)
	}
	if p := byName["pdf"]; p.Description != "Extract text from PDF files" {
		t.Errorf("pdf %+v", p)
	}
}

// TestBuiltinCommandContextHeld: what UserPromptSubmit adds for a
// built-in command, which sends nothing to the model, goes with the next
// prompt that does.
func TestBuiltinCommandContextHeld(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Hello."), agentlooptest.Text("SUMMARY: greeted."), agentlooptest.Text("Next."))
	opts := compactOptions(t, srv, cwd, configDir, 0)
	opts.Hooks = map[hooks.Event][]hooks.Matcher{hooks.UserPromptSubmit: {{Hooks: []hooks.Callback{
		func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			if strings.HasPrefix(in.(hooks.UserPromptSubmitInput).Prompt, "/compact") {
				return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{AdditionalContext: "CTX-HELD"}}, nil
			}
			return hooks.Output{}, nil
		}}}}}
	c, err := agentloop.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []string{"hello", "/compact", "next"} {
		if _, err := c.Query(context.Background(), p).Result(); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !isSummary(reqs[1]) {
		t.Fatalf("%d requests", len(reqs))
	}
	if strings.Contains(allUserText(reqs[1]), "CTX-HELD") {
		t.Error("the held context went into the summary request")
	}
	if n := strings.Count(allUserText(reqs[2]), "CTX-HELD"); n != 1 {
		t.Errorf("the next prompt carries the held context %d times, want 1", n)
	}
}

// A settings guard hook with "if" runs only for the Bash calls its rule
// matches, any part of a compound command included, and blocks them.
func TestIfConditionHookGuardsBash(t *testing.T) {
	cwd := projectWithSettings(t, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[
		{"type":"command","if":"Bash(rm *)","command":"echo \"$(cat)\" >> hook.log; echo no removals >&2; exit 2"}]}]}}`)
	if err := os.WriteFile(filepath.Join(cwd, "victim.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch first.txt && rm -f victim.txt"}),
		agentlooptest.ToolUse("toolu_2", "Bash", map[string]any{"command": "touch second.txt"}),
		agentlooptest.Text("done"))
	_, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
		Tools: []string{"Bash"}, AllowedTools: []string{"Bash"}, SettingSources: projectOnly, ConfigDir: t.TempDir()}).Result()
	if err != nil {
		t.Fatal(err)
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(cwd, name)); return err == nil }
	if diff := cmp.Diff([]bool{true, false, true}, []bool{exists("victim.txt"), exists("first.txt"), exists("second.txt")}); diff != "" {
		t.Errorf("victim.txt, first.txt, second.txt exist (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	if tr, ok := reqs[1].ToolResult("toolu_1"); !ok || tr.IsError == nil || !*tr.IsError || !strings.Contains(tr.ResultText(), "no removals") {
		t.Errorf("toolu_1 result %+v, want the hook's block", tr)
	}
	log, _ := os.ReadFile(filepath.Join(cwd, "hook.log"))
	if n := strings.Count(string(log), `"tool_name":"Bash"`); n != 1 {
		t.Errorf("the hook ran %d times, want once:\n%s", n, log)
	}
}
