package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/wire"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
)

func f64(v float64) *float64 { return &v }

// TestHookBridgeRegistration: matchers, ids and timeouts of the host's
// registration become hooks.Matchers; bad registrations fail, naming
// what is wrong.
func TestHookBridgeRegistration(t *testing.T) {
	h := &bridgeHost{answer: answerWith(`{}`, nil)}
	got, err := hookBridge(h, map[string][]wire.HookMatcher{
		"PreToolUse": {{Matcher: "Write|Edit", HookCallbackIDs: []string{"hook_0"}, Timeout: f64(30)},
			{Matcher: "Bash", HookCallbackIDs: []string{"hook_1", "hook_2"}, OnFailure: "block"}},
		"UserPromptSubmit": {{HookCallbackIDs: []string{"hook_3"}, Extra: map[string]json.RawMessage{"whenUnanswered": json.RawMessage(`"keep"`)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	type shape struct {
		Matcher string
		N       int
		Timeout time.Duration
	}
	view := map[hooks.Event][]shape{}
	for ev, ms := range got {
		for _, m := range ms {
			view[ev] = append(view[ev], shape{m.Matcher, len(m.Hooks), m.Timeout})
		}
	}
	want := map[hooks.Event][]shape{
		hooks.PreToolUse:       {{"Write|Edit", 1, 30 * time.Second}, {"Bash", 2, 0}},
		hooks.UserPromptSubmit: {{"", 1, 0}},
	}
	if diff := cmp.Diff(want, view); diff != "" {
		t.Errorf("matchers (-want +got):\n%s", diff)
	}
	if _, reports := h.snapshot(); len(reports) != 1 || !strings.Contains(reports[0], "whenUnanswered") {
		t.Errorf("reports = %q; want whenUnanswered reported", reports)
	}

	for _, tc := range []struct {
		name string
		reg  map[string][]wire.HookMatcher
		want string
	}{
		{"unknown events", map[string][]wire.HookMatcher{"Teleport": {{HookCallbackIDs: []string{"a"}}}, "Blink": {{HookCallbackIDs: []string{"b"}}}, "Stop": {{HookCallbackIDs: []string{"c"}}}}, "Blink, Teleport"},
		{"onFailure", map[string][]wire.HookMatcher{"Stop": {{HookCallbackIDs: []string{"a"}, OnFailure: "retry"}}}, `"retry"`},
		{"timeout", map[string][]wire.HookMatcher{"Stop": {{HookCallbackIDs: []string{"a"}, Timeout: f64(-1)}}}, "timeout"},
		{"no ids", map[string][]wire.HookMatcher{"Stop": {{}}}, "hookCallbackIds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := hookBridge(h, tc.reg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want one naming %s", err, tc.want)
			}
		})
	}
}

// TestHookBridgeAnswers: a callback sends hook_callback with its id, the
// input and the tool call's id, and reads the host's answers as hook
// output; an error or malformed answer is an empty answer with an error
// (the dispatcher reports it), or a block with onFailure block.
func TestHookBridgeAnswers(t *testing.T) {
	in := hooks.PreToolUseInput{Base: hooks.Base{SessionID: "s1", Cwd: "/w", HookEventName: hooks.PreToolUse},
		ToolName: "Write", ToolInput: json.RawMessage(`{"file_path":"/w/a"}`), ToolUseID: "toolu_1"}
	hostErr := &hostError{Subtype: "hook_callback", Message: "hook exploded"}
	for _, tc := range []struct {
		name    string
		payload string
		err     error
		block   bool
		want    hooks.Output
		wantErr string
	}{
		{name: "empty", payload: `{}`},
		{name: "continue", payload: `{"continue":true}`},
		{name: "halt", payload: `{"continue":false,"stopReason":"enough"}`, want: hooks.Output{Halt: true, StopReason: "enough"}},
		{name: "block", payload: `{"decision":"block","reason":"not now"}`, want: hooks.Output{Decision: "block", Reason: "not now"}},
		{name: "specific", payload: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"hook says ok","updatedInput":{"file_path":"/w/b"},"additionalContext":"note"}}`,
			want: hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{HookEventName: hooks.PreToolUse, PermissionDecision: hooks.Allow,
				PermissionDecisionReason: "hook says ok", UpdatedInput: json.RawMessage(`{"file_path":"/w/b"}`), AdditionalContext: "note"}}},
		{name: "host error", err: hostErr, wantErr: "hook exploded"},
		{name: "host gone", err: errHostGone, wantErr: "could not be reached"},
		{name: "not an object", payload: `[]`, wantErr: "not a JSON object"},
		{name: "wrong type", payload: `{"decision":7}`, wantErr: "not hook output"},
		{name: "host error, block", err: hostErr, block: true, want: hooks.Output{Decision: "block"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &bridgeHost{answer: answerWith(tc.payload, tc.err)}
			reg := wire.HookMatcher{HookCallbackIDs: []string{"hook_0"}}
			if tc.block {
				reg.OnFailure = "block"
			}
			ms, err := hookBridge(h, map[string][]wire.HookMatcher{"PreToolUse": {reg}})
			if err != nil {
				t.Fatal(err)
			}
			out, err := ms[hooks.PreToolUse][0].Hooks[0](context.Background(), in, "toolu_1")
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "hook_0") {
					t.Errorf("err = %v; want one naming hook_0 and %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("err = %v", err)
			case tc.block:
				if out.Decision != "block" || !strings.Contains(out.Reason, "hook exploded") {
					t.Errorf("output = %+v; want a block naming the failure", out)
				}
			default:
				if diff := cmp.Diff(tc.want, out); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
			}
			calls, _ := h.snapshot()
			if len(calls) != 1 || calls[0].Subtype != "hook_callback" {
				t.Fatalf("calls = %+v", calls)
			}
			b := calls[0].Body
			input, _ := b["input"].(map[string]any)
			if b["callback_id"] != "hook_0" || b["tool_use_id"] != "toolu_1" || input["tool_name"] != "Write" || input["hook_event_name"] != "PreToolUse" {
				t.Errorf("request body = %v", b)
			}
		})
	}
}

// TestHookBridgeNonToolID: for an event without a tool call the request's
// tool_use_id is a fresh UUID.
func TestHookBridgeNonToolID(t *testing.T) {
	h := &bridgeHost{answer: answerWith(`{}`, nil)}
	ms, err := hookBridge(h, map[string][]wire.HookMatcher{"UserPromptSubmit": {{HookCallbackIDs: []string{"hook_3"}}}})
	if err != nil {
		t.Fatal(err)
	}
	in := hooks.UserPromptSubmitInput{Base: hooks.Base{HookEventName: hooks.UserPromptSubmit}, Prompt: "hi"}
	if _, err := ms[hooks.UserPromptSubmit][0].Hooks[0](context.Background(), in, ""); err != nil {
		t.Fatal(err)
	}
	calls, _ := h.snapshot()
	id, _ := calls[0].Body["tool_use_id"].(string)
	if _, err := uuid.Parse(id); err != nil {
		t.Errorf("tool_use_id = %q; want a UUID", id)
	}
}

// TestHookBridgeLoop: through the real loop, a PreToolUse callback
// matched by "Write|Edit" rewrites the input and allows the call; a
// UserPromptSubmit callback the host fails on becomes a
// hook_callback_failed diagnostic (the reference's tag, not the
// hook_failed of Go and command hooks) and the run goes on.
func TestHookBridgeLoop(t *testing.T) {
	cwd := t.TempDir()
	asked := filepath.Join(cwd, "asked.txt")
	hooked := filepath.Join(cwd, "hooked.txt")
	h := &bridgeHost{answer: func(_ string, body map[string]any) (json.RawMessage, error) {
		switch body["callback_id"] {
		case "hook_0":
			b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse",
				"permissionDecision": "allow", "permissionDecisionReason": "hook says ok",
				"updatedInput": map[string]any{"file_path": hooked, "content": "content from hook\n"}}})
			return b, nil
		case "hook_1":
			return nil, &hostError{Subtype: "hook_callback", Message: "hook exploded"}
		}
		return json.RawMessage(`{}`), nil
	}}
	reg, err := hookBridge(h, map[string][]wire.HookMatcher{
		"PreToolUse":       {{Matcher: "Write|Edit", HookCallbackIDs: []string{"hook_0"}}, {Matcher: "Bash", HookCallbackIDs: []string{"hook_2"}}},
		"UserPromptSubmit": {{HookCallbackIDs: []string{"hook_1"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": asked, "content": "from the model\n"}),
		agentlooptest.Text("done"))
	msgs, err := agentloop.Query(context.Background(), "write it", &agentloop.Options{
		Provider: bridgeProvider(t, srv), Cwd: cwd, Tools: []string{"Write"}, Hooks: reg,
		SettingSources: []settings.SettingSource{}}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(hooked); err != nil || string(b) != "content from hook\n" {
		t.Errorf("hooked.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(asked); err == nil {
		t.Error("the model's path was written too")
	}
	var diag []string
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok {
			diag = append(diag, d.Tag+": "+d.Text)
		}
	}
	found := false
	for _, d := range diag {
		found = found || (strings.HasPrefix(d, "hook_callback_failed: ") && strings.Contains(d, "hook_1") && strings.Contains(d, "hook exploded"))
	}
	if !found {
		t.Errorf("diagnostics %q; want a hook_callback_failed one for hook_1", diag)
	}
	calls, _ := h.snapshot()
	var ids []any
	for _, c := range calls {
		ids = append(ids, c.Body["callback_id"])
	}
	if diff := cmp.Diff([]any{"hook_1", "hook_0"}, ids); diff != "" {
		t.Errorf("callbacks asked (-want +got); the Bash matcher must not run for Write:\n%s", diff)
	}
}
