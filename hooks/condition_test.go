package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// loadFlagHooks reads the hooks of a --settings JSON text, as a session
// does.
func loadFlagHooks(t *testing.T, cwd, flag string) map[string][]settings.HookMatcher {
	t.Helper()
	s, err := settings.Load(settings.Options{Cwd: cwd, Home: t.TempDir(), ConfigDir: t.TempDir(),
		ManagedPath: filepath.Join(cwd, "none.json"), Sources: []settings.SettingSource{}, Flag: flag})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) > 0 {
		t.Fatalf("settings warnings: %q", s.Warnings)
	}
	return s.Hooks
}

// notes collects Config.Debug texts.
type notes struct {
	mu   sync.Mutex
	list []string
}

func (n *notes) add(s string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.list = append(n.list, s)
}

func (n *notes) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.list...)
}

func bashInput(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}

// The guard hook of the reference's documentation: "if" picks the Bash
// calls that run rm, in any part of a compound command, and a command the
// checker cannot judge runs the hook too.
func TestIfConditionGuardsBash(t *testing.T) {
	cwd := t.TempDir()
	cfg := testConfig(cwd)
	cfg.Commands = loadFlagHooks(t, cwd, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[
		{"type":"command","if":"Bash(rm *)","command":"echo blocked >&2; exit 2"}]}]}}`)
	d := mustNew(t, cfg)
	if w := d.Warnings(); len(w) > 0 {
		t.Fatalf("warnings %q", w)
	}
	type out struct {
		Decision Decision
		Ran      int
	}
	blocked, free := out{Deny, 1}, out{None, 0}
	for _, tc := range []struct {
		cmd  string
		want out
	}{
		{"rm -rf x", blocked},
		{"ls && rm -rf x", blocked},
		{"ls; rm -rf x", blocked},
		{"ls | xargs rm -rf", blocked},
		{"(cd sub && rm -rf x)", blocked},
		{"sudo rm -rf x", blocked},
		{"echo $(rm -rf x)", blocked},
		// Not judgeable: the hook runs, and its block counts.
		{"$CMD -rf x", blocked},
		{`eval "$X"`, blocked},
		{`bash -c "$(cat f)"`, blocked},
		{"echo 'unterminated", blocked},
		{"ls", free},
		{"ls -l && echo rm", free},
		{"rmdir x", free},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			res := d.PreToolUse(context.Background(), PreToolUseInput{ToolName: "Bash", ToolInput: bashInput(tc.cmd), ToolUseID: "t1"})
			if diff := cmp.Diff(tc.want, out{res.Decision, res.Ran}); diff != "" {
				t.Errorf("%q (-want +got):\n%s", tc.cmd, diff)
			}
			if tc.want == blocked && !strings.Contains(res.Message, "blocked") {
				t.Errorf("message %q, want the hook's stderr", res.Message)
			}
		})
	}
}

// A hook whose condition cannot be judged for the call may deny, not
// allow: its allow, approve and updatedInput are dropped.
func TestIfConditionUnjudgedDropsAllow(t *testing.T) {
	cwd := t.TempDir()
	allow := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"fine","updatedInput":{"command":"true"}}}`
	approve := `{"decision":"approve","reason":"fine"}`
	permAllow := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"true"}}}}`
	permDeny := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no"}}}`
	hook := func(ev Event, out string) map[string][]settings.HookMatcher {
		return map[string][]settings.HookMatcher{string(ev): {{Matcher: "Bash", File: "test.json", Hooks: []settings.Hook{
			{Type: "command", If: "Bash(rm *)", Command: "cat <<'EOF'\n" + out + "\nEOF"}}}}}
	}
	type out struct {
		Decision Decision
		Updated  string
		Ran      int
		Notes    int
	}
	for _, tc := range []struct {
		name, cmd string
		ev        Event
		output    string
		want      out
	}{
		{"allow, match", "rm x", PreToolUse, allow, out{Allow, `{"command":"true"}`, 1, 0}},
		{"allow, unjudged", "$CMD x", PreToolUse, allow, out{None, "", 1, 1}},
		{"allow, no match", "ls", PreToolUse, allow, out{None, "", 0, 0}},
		{"approve, match", "rm x", PreToolUse, approve, out{Allow, "", 1, 0}},
		{"approve, unjudged", "$CMD x", PreToolUse, approve, out{None, "", 1, 1}},
		{"permission allow, match", "rm x", PermissionRequest, permAllow, out{Allow, `{"command":"true"}`, 1, 0}},
		{"permission allow, unjudged", "$CMD x", PermissionRequest, permAllow, out{None, "", 1, 1}},
		{"permission deny, unjudged", "$CMD x", PermissionRequest, permDeny, out{Deny, "", 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &notes{}
			cfg := testConfig(cwd)
			cfg.Commands, cfg.Debug = hook(tc.ev, tc.output), n.add
			d := mustNew(t, cfg)
			var got out
			switch tc.ev {
			case PreToolUse:
				r := d.PreToolUse(context.Background(), PreToolUseInput{ToolName: "Bash", ToolInput: bashInput(tc.cmd), ToolUseID: "t1"})
				got = out{r.Decision, string(r.UpdatedInput), r.Ran, 0}
				if len(r.Errors) > 0 {
					t.Errorf("errors %q", r.Errors)
				}
			case PermissionRequest:
				r := d.PermissionRequest(context.Background(), PermissionRequestInput{ToolName: "Bash", ToolInput: bashInput(tc.cmd)})
				got = out{r.Decision, string(r.UpdatedInput), r.Ran, 0}
			}
			got.Notes = len(n.all())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nnotes: %q", diff, n.all())
			}
		})
	}
}

// A path condition picks file-tool calls by their path.
func TestIfConditionEditPaths(t *testing.T) {
	cwd := t.TempDir()
	cfg := testConfig(cwd)
	cfg.Commands = loadFlagHooks(t, cwd, `{"hooks":{"PreToolUse":[{"matcher":"Edit|Write","hooks":[
		{"type":"command","if":"Edit(src/**)","command":"echo \"$(cat)\" >> ran.log; echo src is frozen >&2; exit 2"}]}]}}`)
	d := mustNew(t, cfg)
	edit := func(tool, path string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"file_path": path, "old_string": "a", "new_string": "b"})
		return b
	}
	for _, tc := range []struct {
		tool, path string
		want       Decision
	}{
		{"Edit", "src/a.go", Deny},
		{"Edit", filepath.Join(cwd, "src", "pkg", "a.go"), Deny},
		{"Edit", "docs/a.md", None},
		{"Edit", filepath.Join(cwd, "a.go"), None},
		{"Write", "src/a.go", None}, // the condition names Edit, not Write
	} {
		t.Run(tc.tool+" "+tc.path, func(t *testing.T) {
			res := d.PreToolUse(context.Background(), PreToolUseInput{ToolName: tc.tool, ToolInput: edit(tc.tool, tc.path), ToolUseID: "t1"})
			if res.Decision != tc.want {
				t.Errorf("decision %q, want %q (message %q)", res.Decision, tc.want, res.Message)
			}
		})
	}
	log, _ := os.ReadFile(filepath.Join(cwd, "ran.log"))
	if n := strings.Count(string(log), `"tool_name":"Edit"`); n != 2 {
		t.Errorf("the hook ran %d times, want 2:\n%s", n, log)
	}
}

// Every tool event evaluates "if"; the hook runs only for matching calls.
func TestIfConditionToolEvents(t *testing.T) {
	cwd := t.TempDir()
	for _, ev := range []Event{PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest} {
		t.Run(string(ev), func(t *testing.T) {
			cfg := testConfig(cwd)
			cfg.Commands = map[string][]settings.HookMatcher{string(ev): {{File: "test.json", Hooks: []settings.Hook{
				{Type: "command", If: "Bash(git push *)", Command: "echo pushed >&2; exit 2"}}}}}
			d := mustNew(t, cfg)
			run := func(cmd string) int {
				in := bashInput(cmd)
				switch ev {
				case PreToolUse:
					return d.PreToolUse(context.Background(), PreToolUseInput{ToolName: "Bash", ToolInput: in}).Ran
				case PostToolUse:
					return d.PostToolUse(context.Background(), PostToolUseInput{ToolName: "Bash", ToolInput: in, ToolResponse: json.RawMessage(`{}`)}).Ran
				case PostToolUseFailure:
					return d.PostToolUseFailure(context.Background(), PostToolUseFailureInput{ToolName: "Bash", ToolInput: in, Error: "x"}).Ran
				}
				return d.PermissionRequest(context.Background(), PermissionRequestInput{ToolName: "Bash", ToolInput: in}).Ran
			}
			got := []int{run("git push origin main"), run("git status"), run("cd repo && git push -f")}
			if diff := cmp.Diff([]int{1, 0, 1}, got); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
		})
	}
}

// A hook with "if" on an event that is not about a tool call never runs,
// and New says so once.
func TestIfConditionNonToolEvent(t *testing.T) {
	cwd := t.TempDir()
	marker := filepath.Join(cwd, "ran")
	cfg := testConfig(cwd)
	cfg.Commands = map[string][]settings.HookMatcher{
		string(UserPromptSubmit): {{File: "test.json", Hooks: []settings.Hook{{Type: "command", If: "Bash(rm *)", Command: "touch " + marker}}}},
		string(Stop):             {{File: "test.json", Hooks: []settings.Hook{{Type: "command", If: "Bash", Command: "touch " + marker}}}},
	}
	d := mustNew(t, cfg)
	want := []string{
		`test.json: hooks.UserPromptSubmit: command hook "touch ` + marker + `": if condition "Bash(rm *)" cannot be evaluated for UserPromptSubmit, which is not a tool event; the hook is skipped`,
		`test.json: hooks.Stop: command hook "touch ` + marker + `": if condition "Bash" cannot be evaluated for Stop, which is not a tool event; the hook is skipped`,
	}
	if diff := cmp.Diff(want, d.Warnings()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	r := d.UserPromptSubmit(context.Background(), UserPromptSubmitInput{Prompt: "rm -rf x"})
	s := d.Stop(context.Background(), StopInput{})
	if r.Ran+s.Ran != 0 {
		t.Errorf("ran %d and %d hooks, want none", r.Ran, s.Ran)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the hook ran")
	}
}

// A relative path with no working directory to resolve it against cannot
// be tested: the hook runs, with a note.
func TestIfConditionUntested(t *testing.T) {
	n := &notes{}
	cfg := testConfig(t.TempDir())
	cfg.Debug = n.add
	cfg.Commands = map[string][]settings.HookMatcher{string(PreToolUse): {{File: "test.json", Hooks: []settings.Hook{
		{Type: "command", If: "Edit(src/**)", Command: "exit 2"}}}}}
	d := mustNew(t, cfg)
	in := PreToolUseInput{Base: Base{Cwd: "not/absolute"}, ToolName: "Edit", ToolInput: json.RawMessage(`{"file_path":"docs/a.md"}`)}
	res := d.PreToolUse(context.Background(), in)
	if res.Ran != 1 || res.Decision != Deny {
		t.Errorf("ran %d, decision %q; want the hook run and its deny", res.Ran, res.Decision)
	}
	if got := n.all(); len(got) != 1 || !strings.Contains(got[0], "not tested") {
		t.Errorf("notes %q, want one saying the condition was not tested", got)
	}
}

// The same command under two conditions is two hooks.
func TestIfConditionDedupKey(t *testing.T) {
	cwd := t.TempDir()
	cfg := testConfig(cwd)
	cfg.Commands = map[string][]settings.HookMatcher{string(PreToolUse): {{File: "test.json", Hooks: []settings.Hook{
		{Type: "command", If: "Bash(ls *)", Command: "exit 2"},
		{Type: "command", If: "Bash(rm *)", Command: "exit 2"},
		{Type: "command", If: "Bash(rm *)", Command: "exit 2"},
	}}}}
	d := mustNew(t, cfg)
	if got := d.PreToolUse(context.Background(), PreToolUseInput{ToolName: "Bash", ToolInput: bashInput("rm x")}).Ran; got != 1 {
		t.Errorf("ran %d hooks, want 1", got)
	}
	if got := d.PreToolUse(context.Background(), PreToolUseInput{ToolName: "Bash", ToolInput: bashInput("ls && rm x")}).Ran; got != 2 {
		t.Errorf("ran %d hooks, want 2", got)
	}
}
