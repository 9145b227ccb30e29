package conversation_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
)

// blockRun is one session driven through the real loop against the
// scripted model API, with the answers and diagnostics it produced.
type blockRun struct {
	srv   *agentlooptest.Server
	asked []string // the tool names CanUseTool was asked about
	diags []agentloop.Diagnostic
}

// result is the text of the tool_result for id in the request that
// carries it, and whether it is an error.
func (r *blockRun) result(t *testing.T, id string) (string, bool) {
	t.Helper()
	for _, req := range r.srv.Requests() {
		if b, ok := req.ToolResult(id); ok {
			text := b.Text
			for _, c := range b.Blocks {
				text += c.Text
			}
			return text, b.IsError != nil && *b.IsError
		}
	}
	t.Fatalf("no tool_result for %s", id)
	return "", false
}

// runBlock runs one query with opts, whose CanUseTool records what it is
// asked and answers with answer.
func runBlock(t *testing.T, opts *agentloop.Options, answer string, replies ...agentlooptest.Reply) *blockRun {
	t.Helper()
	r := &blockRun{srv: agentlooptest.NewTB(t, replies...)}
	var mu sync.Mutex
	opts.Provider = provider(t, r.srv, nil)
	opts.CanUseTool = func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
		mu.Lock()
		r.asked = append(r.asked, req.ToolName)
		mu.Unlock()
		if answer == "allow" {
			return agentloop.Allow(), nil
		}
		return agentloop.Deny("the test said no"), nil
	}
	for m, err := range agentloop.Query(context.Background(), "go", opts) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := agentloop.DiagnosticOf(m); ok {
			r.diags = append(r.diags, d)
		}
	}
	return r
}

// realDir is a fresh temporary directory with its links resolved.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// hookAnswering is a PreToolUse hook that answers decision ("allow" or
// "ask") for every call.
func hookAnswering(decision hooks.Decision) map[hooks.Event][]hooks.Matcher {
	return map[hooks.Event][]hooks.Matcher{hooks.PreToolUse: {{Hooks: []hooks.Callback{
		func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{HookEventName: hooks.PreToolUse,
				PermissionDecision: decision}}, nil
		}}}}}
}

// TestBlockWritesOutsideWorkingDirectories: with the setting in the
// user's settings file and the session in bypassPermissions, with a
// PreToolUse hook that allows every call (or asks, and CanUseTool allows),
// a Write outside the working directory is denied and the file is not
// made; a Write inside works; a Write to the project's
// .claude/settings.json is denied.
func TestBlockWritesOutsideWorkingDirectories(t *testing.T) {
	for _, hook := range []hooks.Decision{hooks.Allow, hooks.Ask} {
		t.Run("hook "+string(hook), func(t *testing.T) {
			cfg := t.TempDir()
			t.Setenv("CLAUDE_CONFIG_DIR", cfg)
			t.Setenv("IS_SANDBOX", "1") // bypassPermissions as root
			writeSettingsFile(t, filepath.Join(cfg, "settings.json"),
				`{"permissions":{"blockWritesOutsideWorkingDirectories":true,"allow":["Write","Edit"]}}`)
			cwd, out := realDir(t), realDir(t)
			projectSettings := filepath.Join(cwd, ".claude", "settings.json")
			w := func(p string) map[string]any { return map[string]any{"file_path": p, "content": "written\n"} }
			r := runBlock(t, &agentloop.Options{Cwd: cwd, ConfigDir: t.TempDir(), Tools: []string{"Write"},
				PermissionMode: agentloop.PermissionBypass, Hooks: hookAnswering(hook)}, "allow",
				agentlooptest.ToolUse("t1", "Write", w(filepath.Join(out, "x.txt"))),
				agentlooptest.ToolUse("t2", "Write", w(filepath.Join(cwd, "in.txt"))),
				agentlooptest.ToolUse("t3", "Write", w(projectSettings)),
				agentlooptest.Text("done"))

			if text, isErr := r.result(t, "t1"); !isErr || !strings.Contains(text, "blockWritesOutsideWorkingDirectories") {
				t.Errorf("outside write: %q (error %v), want a denial naming the setting", text, isErr)
			}
			if _, err := os.Stat(filepath.Join(out, "x.txt")); !os.IsNotExist(err) {
				t.Errorf("the outside file exists (stat error %v)", err)
			}
			if text, isErr := r.result(t, "t2"); isErr {
				t.Errorf("inside write failed: %q", text)
			}
			if b, err := os.ReadFile(filepath.Join(cwd, "in.txt")); err != nil || string(b) != "written\n" {
				t.Errorf("inside file: %q, %v", b, err)
			}
			if text, isErr := r.result(t, "t3"); !isErr || !strings.Contains(text, "blockWritesOutsideWorkingDirectories") {
				t.Errorf("settings write: %q (error %v), want a denial naming the setting", text, isErr)
			}
			if _, err := os.Stat(projectSettings); !os.IsNotExist(err) {
				t.Errorf("the project settings file was written (stat error %v)", err)
			}
			if hook == hooks.Allow && len(r.asked) != 0 {
				t.Errorf("CanUseTool asked about %v", r.asked)
			}
		})
	}
}

// TestBlockReadsOutsideWorkingDirectories: with the setting in --settings
// and bypassPermissions, a Read outside the working directory is refused
// even with an allow rule for it; a Bash command reading outside is put
// to CanUseTool; an exempt path is readable; an excluded subdirectory of
// the working directory is refused.
func TestBlockReadsOutsideWorkingDirectories(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("IS_SANDBOX", "1") // bypassPermissions as root
	cwd, out, exempt := realDir(t), realDir(t), realDir(t)
	for p, body := range map[string]string{
		filepath.Join(out, "hostname"):      "outside-secret\n",
		filepath.Join(exempt, "doc.txt"):    "exempt-text\n",
		filepath.Join(cwd, "secret", "key"): "excluded-secret\n",
		filepath.Join(cwd, "notes.txt"):     "inside-text\n",
	} {
		writeSettingsFile(t, p, body)
	}
	flag, _ := json.Marshal(map[string]any{"permissions": map[string]any{
		"blockReadsOutsideWorkingDirectories": true,
		"blockReadsExemptPaths":               []string{exempt},
		"workingDirectoriesExclude":           []string{filepath.Join(cwd, "secret")},
		"allow":                               []string{"Read(/" + out + "/**)", "Bash(cat:*)"},
	}})
	r := runBlock(t, &agentloop.Options{Cwd: cwd, ConfigDir: t.TempDir(), Tools: []string{"Read", "Bash"},
		PermissionMode: agentloop.PermissionBypass, Settings: string(flag)}, "deny",
		agentlooptest.ToolUse("t1", "Read", map[string]any{"file_path": filepath.Join(out, "hostname")}),
		agentlooptest.ToolUse("t2", "Bash", map[string]any{"command": "cat " + filepath.Join(out, "hostname")}),
		agentlooptest.ToolUse("t3", "Read", map[string]any{"file_path": filepath.Join(exempt, "doc.txt")}),
		agentlooptest.ToolUse("t4", "Read", map[string]any{"file_path": filepath.Join(cwd, "secret", "key")}),
		agentlooptest.ToolUse("t5", "Read", map[string]any{"file_path": filepath.Join(cwd, "notes.txt")}),
		agentlooptest.Text("done"))

	if text, isErr := r.result(t, "t1"); !isErr || strings.Contains(text, "outside-secret") || !strings.Contains(text, "blockReadsOutsideWorkingDirectories") {
		t.Errorf("outside read: %q (error %v), want a denial naming the setting", text, isErr)
	}
	if text, _ := r.result(t, "t2"); strings.Contains(text, "outside-secret") || !strings.Contains(text, "the test said no") {
		t.Errorf("outside cat: %q, want CanUseTool's denial", text)
	}
	if len(r.asked) != 1 || r.asked[0] != "Bash" {
		t.Errorf("CanUseTool asked about %v, want [Bash]", r.asked)
	}
	if text, isErr := r.result(t, "t3"); isErr || !strings.Contains(text, "exempt-text") {
		t.Errorf("exempt read: %q (error %v)", text, isErr)
	}
	if text, isErr := r.result(t, "t4"); !isErr || strings.Contains(text, "excluded-secret") {
		t.Errorf("excluded read: %q (error %v), want a denial", text, isErr)
	}
	if text, isErr := r.result(t, "t5"); isErr || !strings.Contains(text, "inside-text") {
		t.Errorf("inside read: %q (error %v)", text, isErr)
	}
}

// TestDenyInsteadOfPrompting: set in the user's settings, a call that
// would be asked is denied at once, naming the setting, and CanUseTool is
// not called; AskUserQuestion is not offered. Set in the project's file,
// it is ignored with a warning (and CanUseTool decides as usual). An
// unknown permissions member is reported as not honoured.
func TestDenyInsteadOfPrompting(t *testing.T) {
	askUser := func(context.Context, []tool.Question) (map[string]string, error) { return nil, nil }
	for _, where := range []string{inUser, inProject} {
		t.Run(where, func(t *testing.T) {
			cfg := t.TempDir()
			t.Setenv("CLAUDE_CONFIG_DIR", cfg)
			cwd := realDir(t)
			body := `{"permissions":{"denyInsteadOfPrompting":true,"noSuchMember":1}}`
			if where == inUser {
				writeSettingsFile(t, filepath.Join(cfg, "settings.json"), body)
			} else {
				writeSettingsFile(t, filepath.Join(cwd, ".claude", "settings.json"), body)
			}
			target := filepath.Join(cwd, "made.txt")
			r := runBlock(t, &agentloop.Options{Cwd: cwd, ConfigDir: t.TempDir(), Tools: []string{"Write", "AskUserQuestion"},
				AskUser: askUser, SettingSources: []settings.SettingSource{settings.User, settings.Project}}, "allow",
				agentlooptest.ToolUse("t1", "Write", map[string]any{"file_path": target, "content": "x"}),
				agentlooptest.Text("done"))
			text, isErr := r.result(t, "t1")
			offered := false
			for _, td := range r.srv.Requests()[0].Params.Tools {
				offered = offered || td.Name == "AskUserQuestion"
			}
			warned, unknown := false, false
			for _, d := range r.diags {
				warned = warned || d.Tag == agentloop.DiagSettings && strings.Contains(d.Text, "denyInsteadOfPrompting ignored")
				unknown = unknown || d.Tag == agentloop.DiagSettings && strings.Contains(d.Text, `"permissions.noSuchMember" is not honoured`)
			}
			if !unknown {
				t.Errorf("no diagnostic for permissions.noSuchMember: %+v", r.diags)
			}
			_, statErr := os.Stat(target)
			if where == inUser {
				if !isErr || !strings.Contains(text, "permissions.denyInsteadOfPrompting") || len(r.asked) != 0 || statErr == nil {
					t.Errorf("result %q (error %v), asked %v, file made %v: want a denial without asking", text, isErr, r.asked, statErr == nil)
				}
				if offered {
					t.Error("AskUserQuestion is offered")
				}
				if warned {
					t.Error("warned about a user setting")
				}
				return
			}
			if isErr || len(r.asked) != 1 || statErr != nil {
				t.Errorf("result %q (error %v), asked %v: want CanUseTool to decide", text, isErr, r.asked)
			}
			if !warned {
				t.Errorf("no warning for the project's denyInsteadOfPrompting: %+v", r.diags)
			}
			if !offered {
				t.Error("AskUserQuestion is not offered")
			}
		})
	}
}
