package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/settings"
)

// eventCase drives one event through a command hook and a Go callback
// that both return output, and checks what the hook received and what the
// result says.
type eventCase struct {
	ev      Event
	matcher string
	call    func(ctx context.Context, d *Dispatcher) any
	// input is the exact JSON object the hook must receive.
	input map[string]any
	// output is the JSON the hook returns.
	output string
	check  func(t *testing.T, res any)
}

func ptr[T any](v T) *T { return &v }

func eventCases(cwd string) []eventCase {
	common := func(ev Event, extra map[string]any) map[string]any {
		m := map[string]any{
			"session_id":      "sess-1",
			"transcript_path": "/tmp/sess-1.jsonl",
			"cwd":             cwd,
			"permission_mode": "default",
			"hook_event_name": string(ev),
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	base := Base{PermissionMode: "default"}
	return []eventCase{
		{
			ev: PreToolUse, matcher: "Bash",
			call: func(ctx context.Context, d *Dispatcher) any {
				b := base
				b.PromptID, b.Effort = "prompt-1", &Effort{Level: "medium"}
				return d.PreToolUse(ctx, PreToolUseInput{Base: b, ToolName: "Bash",
					ToolInput: json.RawMessage(`{"command":"echo hi"}`), ToolUseID: "toolu_1"})
			},
			input: common(PreToolUse, map[string]any{"prompt_id": "prompt-1", "effort": map[string]any{"level": "medium"},
				"tool_name": "Bash", "tool_input": map[string]any{"command": "echo hi"}, "tool_use_id": "toolu_1"}),
			output: `{"systemMessage":"checked","hookSpecificOutput":{"hookEventName":"PreToolUse",
				"permissionDecision":"allow","permissionDecisionReason":"safe",
				"updatedInput":{"command":"echo bye"},"additionalContext":"ran the check"}}`,
			check: func(t *testing.T, res any) {
				r := res.(PreToolUseResult)
				if r.Decision != Allow || r.Reason != "safe" || r.Message != "" {
					t.Errorf("decision %q reason %q message %q", r.Decision, r.Reason, r.Message)
				}
				if string(r.UpdatedInput) != `{"command":"echo bye"}` {
					t.Errorf("updated input %s", r.UpdatedInput)
				}
				wantStrings(t, "context", r.AdditionalContext, "ran the check")
				wantStrings(t, "system messages", r.SystemMessages, "checked")
				if r.Halt || r.Ran != 1 || len(r.Errors) > 0 {
					t.Errorf("common %+v", r.Common)
				}
			},
		},
		{
			ev: PostToolUse, matcher: "Read",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.PostToolUse(ctx, PostToolUseInput{Base: base, ToolName: "Read",
					ToolInput: json.RawMessage(`{"file_path":"/a"}`), ToolResponse: json.RawMessage(`{"type":"text"}`),
					ToolUseID: "toolu_2", DurationMs: ptr(int64(12))})
			},
			input: common(PostToolUse, map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "/a"},
				"tool_response": map[string]any{"type": "text"}, "tool_use_id": "toolu_2", "duration_ms": 12.0}),
			output: `{"decision":"block","reason":"the file is generated",
				"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"note",
				"updatedToolOutput":{"type":"text","redacted":true}}}`,
			check: func(t *testing.T, res any) {
				r := res.(PostToolUseResult)
				if !r.Blocked || r.Reason != "the file is generated" {
					t.Errorf("blocked %v reason %q", r.Blocked, r.Reason)
				}
				if string(r.UpdatedToolOutput) != `{"type":"text","redacted":true}` {
					t.Errorf("updated output %s", r.UpdatedToolOutput)
				}
				wantStrings(t, "context", r.AdditionalContext, "note")
			},
		},
		{
			ev: PostToolUseFailure, matcher: "Bash",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.PostToolUseFailure(ctx, PostToolUseFailureInput{Base: base, ToolName: "Bash",
					ToolInput: json.RawMessage(`{"command":"false"}`), ToolUseID: "toolu_3",
					Error: "Exit code 1", IsInterrupt: true})
			},
			input: common(PostToolUseFailure, map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "false"},
				"tool_use_id": "toolu_3", "error": "Exit code 1", "is_interrupt": true}),
			output: `{"decision":"block","reason":"try again","hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"it failed"}}`,
			check: func(t *testing.T, res any) {
				r := res.(PostToolUseFailureResult)
				if !r.Blocked || r.Reason != "try again" {
					t.Errorf("blocked %v reason %q", r.Blocked, r.Reason)
				}
				wantStrings(t, "context", r.AdditionalContext, "it failed")
			},
		},
		{
			ev: UserPromptSubmit, matcher: "NeverMatches", // matchers do not apply
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.UserPromptSubmit(ctx, UserPromptSubmitInput{Base: base, Prompt: "delete prod", Source: "sdk"})
			},
			input:  common(UserPromptSubmit, map[string]any{"prompt": "delete prod", "source": "sdk"}),
			output: `{"decision":"block","reason":"not today","hookSpecificOutput":{"hookEventName":"UserPromptSubmit","sessionTitle":"Ops","suppressOriginalPrompt":true}}`,
			check: func(t *testing.T, res any) {
				r := res.(UserPromptSubmitResult)
				if !r.Blocked || r.Reason != "not today" || r.SessionTitle != "Ops" || !r.SuppressOriginalPrompt {
					t.Errorf("result %+v", r)
				}
			},
		},
		{
			ev: UserPromptExpansion, matcher: "review|lint",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.UserPromptExpansion(ctx, UserPromptExpansionInput{Base: base, ExpansionType: "slash_command",
					CommandName: "review", CommandArgs: "main.go", CommandSource: "project", Prompt: "/review main.go"})
			},
			input: common(UserPromptExpansion, map[string]any{"expansion_type": "slash_command", "command_name": "review",
				"command_args": "main.go", "command_source": "project", "prompt": "/review main.go"}),
			output: `{"decision":"block","reason":"no reviews on Fridays","hookSpecificOutput":{"hookEventName":"UserPromptExpansion","additionalContext":"be kind","suppressOriginalPrompt":true}}`,
			check: func(t *testing.T, res any) {
				r := res.(UserPromptExpansionResult)
				if !r.Blocked || r.Reason != "no reviews on Fridays" || !r.SuppressOriginalPrompt || r.Ran != 1 {
					t.Errorf("result %+v", r)
				}
				wantStrings(t, "context", r.AdditionalContext, "be kind")
			},
		},
		{
			ev: Stop, matcher: "NeverMatches",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.Stop(ctx, StopInput{Base: base, StopHookActive: true, LastAssistantMessage: "done",
					BackgroundTasks: []BackgroundTask{{ID: "b1", Type: "shell", Status: "running", Description: "server"}}})
			},
			input: common(Stop, map[string]any{"stop_hook_active": true, "last_assistant_message": "done",
				"background_tasks": []any{map[string]any{"id": "b1", "type": "shell", "status": "running", "description": "server"}}}),
			output: `{"decision":"block","reason":"tests still fail"}`,
			check: func(t *testing.T, res any) {
				r := res.(StopResult)
				if !r.Blocked || r.Reason != "tests still fail" || r.Halt {
					t.Errorf("result %+v", r)
				}
			},
		},
		{
			ev: SubagentStart, matcher: "Explore",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.SubagentStart(ctx, SubagentStartInput{Base: base, AgentID: "agent-7", AgentType: "Explore"})
			},
			input:  common(SubagentStart, map[string]any{"agent_id": "agent-7", "agent_type": "Explore"}),
			output: `{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"be brief"}}`,
			check: func(t *testing.T, res any) {
				wantStrings(t, "context", res.(ContextResult).AdditionalContext, "be brief")
			},
		},
		{
			ev: SubagentStop, matcher: "Explore",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.SubagentStop(ctx, SubagentStopInput{Base: base, AgentID: "agent-7",
					AgentTranscriptPath: "/tmp/agent-7.jsonl", AgentType: "Explore", LastAssistantMessage: "report"})
			},
			input: common(SubagentStop, map[string]any{"stop_hook_active": false, "agent_id": "agent-7",
				"agent_transcript_path": "/tmp/agent-7.jsonl", "agent_type": "Explore", "last_assistant_message": "report"}),
			output: `{"continue":false,"stopReason":"enough","decision":"block","reason":"more"}`,
			check: func(t *testing.T, res any) {
				r := res.(StopResult)
				if !r.Halt || r.StopReason != "enough" || !r.Blocked {
					t.Errorf("result %+v", r)
				}
			},
		},
		{
			ev: PreCompact, matcher: "auto",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.PreCompact(ctx, PreCompactInput{Base: base, Trigger: "auto"})
			},
			input:  common(PreCompact, map[string]any{"trigger": "auto", "custom_instructions": nil}),
			output: `{"continue":false,"decision":"block","reason":"keep the details"}`,
			check: func(t *testing.T, res any) {
				r := res.(PreCompactResult)
				if !r.Blocked || r.Reason != "keep the details" || r.Halt {
					t.Errorf("result %+v (continue:false must be ignored)", r)
				}
			},
		},
		{
			ev: PostCompact, matcher: "manual",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.PostCompact(ctx, PostCompactInput{Base: base, Trigger: "manual", CompactSummary: "the gist"})
			},
			input:  common(PostCompact, map[string]any{"trigger": "manual", "compact_summary": "the gist"}),
			output: `{"continue":false}`,
			check: func(t *testing.T, res any) {
				if r := res.(Common); r.Halt {
					t.Errorf("result %+v (continue:false must be ignored)", r)
				}
			},
		},
		{
			ev: SessionStart, matcher: "startup|resume",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.SessionStart(ctx, SessionStartInput{Base: base, Source: "startup", Model: "claude-opus-5-5"})
			},
			input: common(SessionStart, map[string]any{"source": "startup", "model": "claude-opus-5-5"}),
			output: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"branch main",
				"initialUserMessage":"status?","sessionTitle":"Morning"}}`,
			check: func(t *testing.T, res any) {
				r := res.(SessionStartResult)
				wantStrings(t, "context", r.AdditionalContext, "branch main")
				if r.InitialUserMessage != "status?" || r.SessionTitle != "Morning" {
					t.Errorf("result %+v", r)
				}
			},
		},
		{
			ev: SessionEnd, matcher: "other",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.SessionEnd(ctx, SessionEndInput{Base: base, Reason: "other"})
			},
			input:  common(SessionEnd, map[string]any{"reason": "other"}),
			output: `{"continue":false,"systemMessage":"bye"}`,
			check: func(t *testing.T, res any) {
				r := res.(Common)
				wantStrings(t, "system messages", r.SystemMessages, "bye")
				if r.Halt {
					t.Error("continue:false must be ignored for SessionEnd")
				}
			},
		},
		{
			ev: Notification, matcher: "idle_prompt",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.Notification(ctx, NotificationInput{Base: base, Message: "waiting", Title: "Agent",
					NotificationType: "idle_prompt"})
			},
			input:  common(Notification, map[string]any{"message": "waiting", "title": "Agent", "notification_type": "idle_prompt"}),
			output: `{"continue":false,"hookSpecificOutput":{"hookEventName":"Notification","additionalContext":"user is away"}}`,
			check: func(t *testing.T, res any) {
				r := res.(ContextResult)
				wantStrings(t, "context", r.AdditionalContext, "user is away")
				if r.Halt {
					t.Error("continue:false must be ignored for Notification")
				}
			},
		},
		{
			ev: PermissionRequest, matcher: "Write",
			call: func(ctx context.Context, d *Dispatcher) any {
				return d.PermissionRequest(ctx, PermissionRequestInput{Base: base, ToolName: "Write",
					ToolInput: json.RawMessage(`{"file_path":"/a","content":"x"}`), ToolUseID: "toolu_9",
					PermissionSuggestions: []settings.PermissionUpdate{{Type: settings.AddRules,
						Rules: []settings.RuleValue{{ToolName: "Write"}}, Behavior: settings.Allow, Destination: settings.Session}}})
			},
			input: common(PermissionRequest, map[string]any{"tool_name": "Write",
				"tool_input": map[string]any{"file_path": "/a", "content": "x"},
				"permission_suggestions": []any{map[string]any{"type": "addRules", "rules": []any{map[string]any{"toolName": "Write"}},
					"behavior": "allow", "destination": "session"}}}),
			output: `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow",
				"updatedInput":{"file_path":"/b","content":"x"},
				"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Write"}],"behavior":"allow","destination":"localSettings"}]}}}`,
			check: func(t *testing.T, res any) {
				r := res.(PermissionRequestResult)
				if r.Decision != Allow || string(r.UpdatedInput) != `{"file_path":"/b","content":"x"}` {
					t.Errorf("decision %q input %s", r.Decision, r.UpdatedInput)
				}
				if len(r.UpdatedPermissions) != 1 || r.UpdatedPermissions[0].Destination != settings.LocalSettings {
					t.Errorf("updated permissions %+v", r.UpdatedPermissions)
				}
			},
		},
	}
}

func wantStrings(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func testConfig(cwd string) Config {
	return Config{Cwd: cwd, SessionID: "sess-1", TranscriptPath: "/tmp/sess-1.jsonl"}
}

func TestEveryEventCommandHook(t *testing.T) {
	cwd := t.TempDir()
	covered := map[Event]bool{}
	for _, tc := range eventCases(cwd) {
		covered[tc.ev] = true
		t.Run(string(tc.ev), func(t *testing.T) {
			script := filepath.Join(cwd, string(tc.ev)+".sh")
			capture := filepath.Join(cwd, string(tc.ev)+".json")
			body := "#!/bin/bash\ncat > \"$1\"\ncat <<'EOF'\n" + tc.output + "\nEOF\n"
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := testConfig(cwd)
			cfg.Commands = map[string][]settings.HookMatcher{string(tc.ev): {{Matcher: tc.matcher,
				Hooks: []settings.Hook{{Type: "command", Command: "bash " + script + " " + capture, Timeout: 10}}}}}
			d := mustNew(t, cfg)
			res := tc.call(context.Background(), d)
			got, err := os.ReadFile(capture)
			if err != nil {
				t.Fatalf("the hook did not run: %v (result %+v)", err, res)
			}
			wantJSON(t, got, tc.input)
			tc.check(t, res)
		})
	}
	for _, ev := range Events {
		if !covered[ev] {
			t.Errorf("no case for %s", ev)
		}
	}
}

func TestEveryEventCallback(t *testing.T) {
	cwd := t.TempDir()
	for _, tc := range eventCases(cwd) {
		t.Run(string(tc.ev), func(t *testing.T) {
			var got []byte
			var gotID string
			var mu sync.Mutex
			cb := func(ctx context.Context, in Input, id string) (Output, error) {
				b, err := json.Marshal(in)
				mu.Lock()
				got, gotID = b, id
				mu.Unlock()
				if in.EventName() != tc.ev {
					t.Errorf("EventName %q", in.EventName())
				}
				var out Output
				if err == nil {
					err = json.Unmarshal([]byte(tc.output), &out)
				}
				return out, err
			}
			cfg := testConfig(cwd)
			cfg.Callbacks = map[Event][]Matcher{tc.ev: {{Matcher: tc.matcher, Hooks: []Callback{cb}}}}
			res := tc.call(context.Background(), mustNew(t, cfg))
			if got == nil {
				t.Fatalf("the callback did not run (result %+v)", res)
			}
			wantJSON(t, got, tc.input)
			if id, ok := tc.input["tool_use_id"]; ok && gotID != id {
				t.Errorf("toolUseID %q, want %q", gotID, id)
			}
			if tc.ev == PermissionRequest && gotID != "toolu_9" {
				t.Errorf("toolUseID %q for PermissionRequest", gotID)
			}
			tc.check(t, res)
		})
	}
}

// The reference sends PreToolUse fields in this order.
func TestPreToolUseInputKeyOrder(t *testing.T) {
	b, err := json.Marshal(PreToolUseInput{Base: Base{SessionID: "s", TranscriptPath: "t", Cwd: "c", PromptID: "p",
		PermissionMode: "default", Effort: &Effort{Level: "medium"}, HookEventName: PreToolUse},
		ToolName: "Bash", ToolInput: json.RawMessage(`{}`), ToolUseID: "id"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "effort",
		"hook_event_name", "tool_name", "tool_input", "tool_use_id"}
	if got := topKeys(t, b); !reflect.DeepEqual(got, want) {
		t.Errorf("keys %q\nwant %q", got, want)
	}
}

func mustNew(t *testing.T, cfg Config) *Dispatcher {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w := d.Warnings(); len(w) > 0 {
		t.Logf("warnings: %q", w)
	}
	return d
}

func wantJSON(t *testing.T, got []byte, want map[string]any) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatalf("input %s: %v", got, err)
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("input\n got %s\nwant %s", got, mustJSON(want))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func topKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var keys []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
