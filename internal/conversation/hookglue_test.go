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
	"github.com/google/go-cmp/cmp"
)

// hookRun runs a query with Go hook callbacks and the Bash tool, allowed.
func hookRun(t *testing.T, h map[hooks.Event][]hooks.Matcher, extra func(*agentloop.Options), replies ...agentlooptest.Reply) (*agentlooptest.Server, []agentloop.Message, string) {
	t.Helper()
	srv := agentlooptest.NewTB(t, replies...)
	dir := t.TempDir()
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: dir, Tools: []string{"Bash"},
		AllowedTools: []string{"Bash"}, Hooks: h, SettingSources: []settings.SettingSource{}}
	if extra != nil {
		extra(opts)
	}
	msgs, _ := agentloop.Query(context.Background(), "go", opts).Collect()
	return srv, msgs, dir
}

func cb(f func(in hooks.Input) hooks.Output) []hooks.Matcher {
	return []hooks.Matcher{{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, id string) (hooks.Output, error) {
		return f(in), nil
	}}}}
}

func specific(ev hooks.Event, f func(*hooks.HookSpecificOutput)) hooks.Output {
	o := &hooks.HookSpecificOutput{HookEventName: ev}
	f(o)
	return hooks.Output{HookSpecificOutput: o}
}

func TestHooksInTheLoop(t *testing.T) {
	touch := agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch made-it"})
	done := agentlooptest.Text("done")

	t.Run("PreToolUse deny blocks the call", func(t *testing.T) {
		var got hooks.PreToolUseInput
		h := map[hooks.Event][]hooks.Matcher{hooks.PreToolUse: cb(func(in hooks.Input) hooks.Output {
			got = in.(hooks.PreToolUseInput)
			return specific(hooks.PreToolUse, func(o *hooks.HookSpecificOutput) {
				o.PermissionDecision, o.PermissionDecisionReason = hooks.Deny, "not today"
			})
		})}
		srv, msgs, dir := hookRun(t, h, nil, touch, done)
		if _, err := os.Stat(filepath.Join(dir, "made-it")); err == nil {
			t.Fatal("the denied command ran")
		}
		if got.ToolName != "Bash" || got.ToolUseID != "toolu_1" || !strings.Contains(string(got.ToolInput), "touch made-it") ||
			got.Cwd != dir || got.SessionID == "" || got.PermissionMode != "default" {
			t.Errorf("hook input = %+v", got)
		}
		tr, _ := srv.Requests()[1].ToolResult("toolu_1")
		if tr.IsError == nil || !*tr.IsError || tr.ResultText() != "PreToolUse:Bash hook error: not today" {
			t.Errorf("tool result = %q", tr.ResultText())
		}
		res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
		if len(res.PermissionDenials) != 1 {
			t.Errorf("permission_denials = %+v", res.PermissionDenials)
		}
		u := msgs[2].(*agentloop.UserMessage)
		if u.ToolResultMeta[0].PermissionDecision.Source != "hook" {
			t.Errorf("tool_result_meta = %+v", u.ToolResultMeta)
		}
	})
	t.Run("PreToolUse modifies the input and adds context", func(t *testing.T) {
		h := map[hooks.Event][]hooks.Matcher{hooks.PreToolUse: cb(func(in hooks.Input) hooks.Output {
			return specific(hooks.PreToolUse, func(o *hooks.HookSpecificOutput) {
				o.UpdatedInput = json.RawMessage(`{"command":"touch rewritten"}`)
				o.AdditionalContext = "checked by the guard"
			})
		})}
		srv, _, dir := hookRun(t, h, nil, touch, done)
		if _, err := os.Stat(filepath.Join(dir, "rewritten")); err != nil {
			t.Error("the rewritten command did not run")
		}
		if _, err := os.Stat(filepath.Join(dir, "made-it")); err == nil {
			t.Error("the original command ran")
		}
		if !strings.Contains(string(srv.Requests()[1].Body), "checked by the guard") {
			t.Error("the hook's context did not reach the model")
		}
	})
	t.Run("PreToolUse allow skips the mode but not deny rules", func(t *testing.T) {
		allowAll := map[hooks.Event][]hooks.Matcher{hooks.PreToolUse: cb(func(in hooks.Input) hooks.Output {
			return specific(hooks.PreToolUse, func(o *hooks.HookSpecificOutput) { o.PermissionDecision = hooks.Allow })
		})}
		_, _, dir := hookRun(t, allowAll, func(o *agentloop.Options) { o.AllowedTools = nil }, touch, done)
		if _, err := os.Stat(filepath.Join(dir, "made-it")); err != nil {
			t.Error("a hook's allow did not let a writing command run in default mode")
		}
		_, _, dir = hookRun(t, allowAll, func(o *agentloop.Options) {
			o.AllowedTools, o.DisallowedTools = nil, []string{"Bash(touch *)"}
		}, touch, done)
		if _, err := os.Stat(filepath.Join(dir, "made-it")); err == nil {
			t.Error("a hook's allow overrode a deny rule")
		}
	})
	t.Run("PostToolUse replaces the output and adds context", func(t *testing.T) {
		var got hooks.PostToolUseInput
		h := map[hooks.Event][]hooks.Matcher{hooks.PostToolUse: cb(func(in hooks.Input) hooks.Output {
			got = in.(hooks.PostToolUseInput)
			return specific(hooks.PostToolUse, func(o *hooks.HookSpecificOutput) {
				o.UpdatedToolOutput = json.RawMessage(`"redacted"`)
				o.AdditionalContext = "output was redacted"
			})
		})}
		srv, _, _ := hookRun(t, h, nil, agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo secret"}), done)
		if !strings.Contains(string(got.ToolResponse), "secret") {
			t.Errorf("tool_response = %s", got.ToolResponse)
		}
		tr, _ := srv.Requests()[1].ToolResult("toolu_1")
		if tr.ResultText() != "redacted" {
			t.Errorf("tool result = %q", tr.ResultText())
		}
		if !strings.Contains(string(srv.Requests()[1].Body), "output was redacted") {
			t.Error("the hook's context did not reach the model")
		}
	})
	t.Run("Stop block continues the run", func(t *testing.T) {
		var mu sync.Mutex
		var active []bool
		h := map[hooks.Event][]hooks.Matcher{hooks.Stop: cb(func(in hooks.Input) hooks.Output {
			mu.Lock()
			defer mu.Unlock()
			active = append(active, in.(hooks.StopInput).StopHookActive)
			if len(active) == 1 {
				return hooks.Output{Decision: "block", Reason: "run the tests first"}
			}
			return hooks.Output{}
		})}
		srv, msgs, _ := hookRun(t, h, nil, agentlooptest.Text("finished"), agentlooptest.Text("tests pass"))
		if diff := cmp.Diff([]bool{false, true}, active); diff != "" {
			t.Errorf("stop_hook_active (-want +got):\n%s", diff)
		}
		if srv.Len() != 2 || !strings.Contains(srv.Requests()[1].LastUserText(), "run the tests first") {
			t.Errorf("%d requests; follow-up %q", srv.Len(), srv.LastRequest().LastUserText())
		}
		if res := msgs[len(msgs)-1].(*agentloop.ResultMessage); res.Text() != "tests pass" || res.NumTurns != 2 {
			t.Errorf("result = %+v", res)
		}
	})
	t.Run("UserPromptSubmit adds context or blocks", func(t *testing.T) {
		h := map[hooks.Event][]hooks.Matcher{hooks.UserPromptSubmit: cb(func(in hooks.Input) hooks.Output {
			if in.(hooks.UserPromptSubmitInput).Prompt != "go" {
				t.Errorf("prompt = %q", in.(hooks.UserPromptSubmitInput).Prompt)
			}
			return specific(hooks.UserPromptSubmit, func(o *hooks.HookSpecificOutput) { o.AdditionalContext = "today is Tuesday" })
		})}
		srv, _, _ := hookRun(t, h, nil, done)
		if !strings.Contains(string(srv.Requests()[0].Body), "today is Tuesday") {
			t.Error("prompt context did not reach the model")
		}
		block := map[hooks.Event][]hooks.Matcher{hooks.UserPromptSubmit: cb(func(in hooks.Input) hooks.Output {
			return hooks.Output{Decision: "block", Reason: "no prompts on Tuesdays"}
		})}
		srv, msgs, _ := hookRun(t, block, nil, done)
		res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
		// As the reference ends it (testdata/conformance/t_hook_userprompt_block).
		want := "UserPromptSubmit operation blocked by hook:\nno prompts on Tuesdays\n\nOriginal prompt: go"
		if srv.Len() != 0 || res.IsError || res.Subtype != "success" || res.NumTurns != 0 || res.Text() != want || len(res.Errors) != 0 {
			t.Errorf("%d requests, result %+v; want a success result with text %q", srv.Len(), res, want)
		}
	})
	t.Run("continue false halts after the tools", func(t *testing.T) {
		h := map[hooks.Event][]hooks.Matcher{hooks.PostToolUse: cb(func(in hooks.Input) hooks.Output {
			return hooks.Output{Halt: true, StopReason: "enough for today"}
		})}
		srv, msgs, _ := hookRun(t, h, nil, agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo hi"}), done)
		res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
		if srv.Len() != 1 || res.TerminalReason != "hook_stopped" || res.Text() != "enough for today" {
			t.Errorf("%d requests, result %+v", srv.Len(), res)
		}
	})
	t.Run("SessionStart and SessionEnd", func(t *testing.T) {
		var events []string
		var mu sync.Mutex
		rec := func(in hooks.Input) hooks.Output {
			mu.Lock()
			events = append(events, string(in.EventName()))
			mu.Unlock()
			if in.EventName() == hooks.SessionStart {
				return specific(hooks.SessionStart, func(o *hooks.HookSpecificOutput) { o.AdditionalContext = "project rules: be brief" })
			}
			return hooks.Output{}
		}
		h := map[hooks.Event][]hooks.Matcher{hooks.SessionStart: cb(rec), hooks.SessionEnd: cb(rec), hooks.UserPromptSubmit: cb(rec)}
		srv, _, _ := hookRun(t, h, nil, done)
		if diff := cmp.Diff([]string{"SessionStart", "UserPromptSubmit", "SessionEnd"}, events); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if !strings.Contains(string(srv.Requests()[0].Body), "project rules: be brief") {
			t.Error("session start context did not reach the model")
		}
	})
}

// A command hook from --settings JSON, with hook events in the stream.
func TestCommandHookAndHookEvents(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo hi"}), agentlooptest.Text("ok"))
	dir := t.TempDir()
	settingsJSON := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat > hook_input.json; echo 'blocked by test hook' >&2; exit 2"}]}]}}`
	msgs, _ := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: dir,
		Tools: []string{"Bash"}, AllowedTools: []string{"Bash"}, Settings: settingsJSON, IncludeHookEvents: true,
		SettingSources: []settings.SettingSource{}}).Collect()
	var subtypes []string
	for _, m := range msgs {
		if s, ok := m.(*agentloop.SystemMessage); ok {
			subtypes = append(subtypes, s.Subtype)
		}
	}
	if diff := cmp.Diff([]string{"init", "hook_started", "hook_response"}, subtypes); diff != "" {
		t.Errorf("system lines (-want +got):\n%s", diff)
	}
	tr, _ := srv.Requests()[1].ToolResult("toolu_1")
	if !strings.Contains(tr.ResultText(), "blocked by test hook") || !strings.HasPrefix(tr.ResultText(), "PreToolUse:Bash hook error: ") {
		t.Errorf("tool result = %q", tr.ResultText())
	}
	b, err := os.ReadFile(filepath.Join(dir, "hook_input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(b, &in); err != nil || in["tool_name"] != "Bash" || in["hook_event_name"] != "PreToolUse" {
		t.Errorf("hook stdin = %s", b)
	}
}

// CanUseTool decides calls the rules leave open, and can rewrite them.
func TestCanUseTool(t *testing.T) {
	var asked []string
	can := func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
		asked = append(asked, req.ToolName+":"+req.ToolUseID)
		if strings.Contains(string(req.Input), "first") {
			return agentloop.PermissionResult{Behavior: "allow", UpdatedInput: json.RawMessage(`{"command":"touch approved"}`)}, nil
		}
		return agentloop.Deny("not that one"), nil
	}
	srv, msgs, dir := hookRun(t, nil, func(o *agentloop.Options) { o.AllowedTools, o.CanUseTool = nil, can },
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch first"}),
		agentlooptest.ToolUse("toolu_2", "Bash", map[string]any{"command": "touch second"}),
		agentlooptest.Text("done"))
	if diff := cmp.Diff([]string{"Bash:toolu_1", "Bash:toolu_2"}, asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "approved")); err != nil {
		t.Error("the approved, rewritten call did not run")
	}
	if _, err := os.Stat(filepath.Join(dir, "second")); err == nil {
		t.Error("the denied call ran")
	}
	if tr, _ := srv.Requests()[2].ToolResult("toolu_2"); tr.ResultText() != "not that one" {
		t.Errorf("denial text = %q", tr.ResultText())
	}
	if res := msgs[len(msgs)-1].(*agentloop.ResultMessage); len(res.PermissionDenials) != 1 {
		t.Errorf("denials = %+v", res.PermissionDenials)
	}
}

// A denial with interrupt ends the run after the reply's tools.
func TestCanUseToolInterrupt(t *testing.T) {
	can := func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
		return agentloop.PermissionResult{Behavior: "deny", Message: "stop everything", Interrupt: true}, nil
	}
	srv, msgs, dir := hookRun(t, nil, func(o *agentloop.Options) { o.AllowedTools, o.CanUseTool = nil, can },
		agentlooptest.Blocks(agentlooptest.ToolUseBlock("toolu_1", "Bash", map[string]any{"command": "touch first"}),
			agentlooptest.ToolUseBlock("toolu_2", "Bash", map[string]any{"command": "echo after"})),
		agentlooptest.Text("never"))
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if srv.Len() != 1 || res.Subtype != "error_during_execution" || res.TerminalReason != "aborted_tools" {
		t.Errorf("%d requests, result %+v", srv.Len(), res)
	}
	if _, err := os.Stat(filepath.Join(dir, "first")); err == nil {
		t.Error("the denied call ran")
	}
}
