// Package severity1 runs github.com/severity1/claude-agent-sdk-go against
// agentloop. Its one-shot Query finds the engine as "claude" on PATH
// (run.sh puts a link there); the Client is given the path.
package severity1

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	claudecode "github.com/severity1/claude-agent-sdk-go"

	"github.com/agentloop/agentloop/interop/go/internal/fixture"
)

func opts(f *fixture.Fixture, extra ...claudecode.Option) []claudecode.Option {
	return append([]claudecode.Option{
		claudecode.WithCLIPath(fixture.Engine(f.T())),
		claudecode.WithCwd(f.Cwd),
		claudecode.WithEnv(f.Env()),
	}, extra...)
}

// drain reads it until the end or a result (stopAtResult).
func drain(ctx context.Context, t *testing.T, it claudecode.MessageIterator, stopAtResult bool) []claudecode.Message {
	t.Helper()
	var out []claudecode.Message
	for {
		m, err := it.Next(ctx)
		if errors.Is(err, claudecode.ErrNoMoreMessages) {
			return out
		}
		if err != nil {
			t.Fatalf("after %d messages: %v", len(out), err)
		}
		out = append(out, m)
		if _, ok := m.(*claudecode.ResultMessage); ok && stopAtResult {
			return out
		}
	}
}

func results(msgs []claudecode.Message) []*claudecode.ResultMessage {
	var out []*claudecode.ResultMessage
	for _, m := range msgs {
		if r, ok := m.(*claudecode.ResultMessage); ok {
			out = append(out, r)
		}
	}
	return out
}

func resultText(t *testing.T, msgs []claudecode.Message) string {
	t.Helper()
	rs := results(msgs)
	if len(rs) == 0 || rs[len(rs)-1].Result == nil {
		t.Fatalf("no result with text among %d messages", len(msgs))
	}
	return *rs[len(rs)-1].Result
}

func assistantText(msgs []claudecode.Message) string {
	var parts []string
	for _, m := range msgs {
		if a, ok := m.(*claudecode.AssistantMessage); ok {
			for _, b := range a.Content {
				if tb, ok := b.(*claudecode.TextBlock); ok {
					parts = append(parts, tb.Text)
				}
			}
		}
	}
	return strings.Join(parts, "\n")
}

func query(t *testing.T, f *fixture.Fixture, prompt string, extra ...claudecode.Option) []claudecode.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fixture.Timeout)
	defer cancel()
	it, err := claudecode.Query(ctx, prompt, opts(f, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	return drain(ctx, t, it, false)
}

// withClient runs fn with a connected client.
func withClient(t *testing.T, f *fixture.Fixture, fn func(ctx context.Context, c claudecode.Client), extra ...claudecode.Option) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fixture.Timeout)
	defer cancel()
	err := claudecode.WithClient(ctx, func(c claudecode.Client) error {
		fn(ctx, c)
		return nil
	}, opts(f, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
}

func turn(ctx context.Context, t *testing.T, c claudecode.Client, prompt string) []claudecode.Message {
	t.Helper()
	if err := c.Query(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	return drain(ctx, t, c.ReceiveResponse(ctx), true)
}

func TestOneShotQuery(t *testing.T) {
	f := fixture.New(t, fixture.Texts("Hello from the script."))
	msgs := query(t, f, "Say hello")
	if got := resultText(t, msgs); got != "Hello from the script." {
		t.Errorf("result = %q", got)
	}
	if got := assistantText(msgs); got != "Hello from the script." {
		t.Errorf("assistant text = %q", got)
	}
	reqs := f.MainRequests()
	if len(reqs) != 1 || !slices.Equal(reqs[0].Texts(), []string{"user: Say hello"}) {
		t.Errorf("requests: %+v", reqs)
	}
}

func TestMultiTurnClient(t *testing.T) {
	f := fixture.New(t, fixture.Texts("The word is PAPAYA.", "You said PAPAYA."))
	var got []string
	withClient(t, f, func(ctx context.Context, c claudecode.Client) {
		got = append(got, resultText(t, turn(ctx, t, c, "Remember the word")))
		got = append(got, resultText(t, turn(ctx, t, c, "What was the word?")))
	})
	if diff := cmp.Diff([]string{"The word is PAPAYA.", "You said PAPAYA."}, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	reqs := f.MainRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	want := []string{"user: Remember the word", "assistant: The word is PAPAYA.", "user: What was the word?"}
	if diff := cmp.Diff(want, reqs[1].Texts()); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
}

// TestInterrupt: this client interrupts by sending the engine SIGINT. The
// reference then ends the turn as interrupted (the marker as a user
// message, an error_during_execution result) and exits; the session keeps
// the prompt and the marker, so a resumed query does not ask it again
// (checked against the reference CLI 2.1.332).
func TestInterrupt(t *testing.T) {
	f := fixture.New(t, map[string]any{
		"replies": []any{map[string]any{"text": "slow", "delay_ms": 15000}, map[string]any{"text": "after the interrupt"}},
		"side":    fixture.Side,
	})
	var interrupted []claudecode.Message
	withClient(t, f, func(ctx context.Context, c claudecode.Client) {
		if err := c.Query(ctx, "take your time"); err != nil {
			t.Fatal(err)
		}
		f.WaitMainRequests(1)
		if err := c.Interrupt(ctx); err != nil {
			t.Fatalf("interrupt: %v", err)
		}
		interrupted = drain(ctx, t, c.ReceiveResponse(ctx), true)
	})
	rs := results(interrupted)
	if len(rs) != 1 || rs[0].Subtype != "error_during_execution" {
		t.Fatalf("interrupted turn: %d results (%+v)", len(rs), rs)
	}
	marker := false
	for _, m := range interrupted {
		if u, ok := m.(*claudecode.UserMessage); ok {
			if s, ok := u.Content.(string); ok && strings.Contains(s, "[Request interrupted by user]") {
				marker = true
			}
			if bs, ok := u.Content.([]claudecode.ContentBlock); ok {
				for _, b := range bs {
					if tb, ok := b.(*claudecode.TextBlock); ok && strings.Contains(tb.Text, "[Request interrupted by user]") {
						marker = true
					}
				}
			}
		}
	}
	if !marker {
		t.Errorf("no user message with the interruption marker among %d messages", len(interrupted))
	}
	after := query(t, f, "are you there?", claudecode.WithResume(rs[0].SessionID))
	if got := resultText(t, after); got != "after the interrupt" {
		t.Errorf("result after the interrupt = %q", got)
	}
	reqs := f.MainRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	// The reference resumes a session that ends with a user message with
	// a synthetic assistant reply in between.
	want := []string{"user: take your time", "user: [Request interrupted by user]", "assistant: No response requested.", "user: are you there?"}
	if diff := cmp.Diff(want, reqs[1].Texts()); diff != "" {
		t.Errorf("resumed request (-want +got):\n%s", diff)
	}
}

func TestCanUseToolAllowUpdatedInput(t *testing.T) {
	f := fixture.New(t, fixture.WriteScript)
	var seen []string
	canUse := func(_ context.Context, name string, input map[string]any, _ claudecode.ToolPermissionContext) (claudecode.PermissionResult, error) {
		seen = append(seen, name+":"+input["content"].(string))
		allow := claudecode.NewPermissionResultAllow()
		allow.UpdatedInput = map[string]any{"file_path": input["file_path"], "content": "changed by host"}
		return allow, nil
	}
	var msgs []claudecode.Message
	withClient(t, f, func(ctx context.Context, c claudecode.Client) {
		msgs = turn(ctx, t, c, "Write the file")
	}, claudecode.WithCanUseTool(canUse))
	if diff := cmp.Diff([]string{"Write:original"}, seen); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	if got := f.ReadFile("a.txt"); got != "changed by host" {
		t.Errorf("a.txt = %q", got)
	}
	if got := resultText(t, msgs); got != "done" {
		t.Errorf("result = %q", got)
	}
}

func TestCanUseToolDeny(t *testing.T) {
	f := fixture.New(t, fixture.WriteScript)
	canUse := func(context.Context, string, map[string]any, claudecode.ToolPermissionContext) (claudecode.PermissionResult, error) {
		return claudecode.NewPermissionResultDeny("not today, scripted"), nil
	}
	withClient(t, f, func(ctx context.Context, c claudecode.Client) {
		turn(ctx, t, c, "Write the file")
	}, claudecode.WithCanUseTool(canUse))
	if got := f.ReadFile("a.txt"); got != "<absent>" {
		t.Errorf("the denied write happened: %q", got)
	}
	tr := f.ToolResult(1, "toolu_w1")
	if !tr.IsError || !strings.Contains(tr.Text, "not today, scripted") {
		t.Errorf("tool result = %+v", tr)
	}
}

func TestPreToolUseHookBlocks(t *testing.T) {
	f := fixture.New(t, fixture.WriteScript)
	var calls []string
	hook := func(_ context.Context, input any, _ *string, _ claudecode.HookContext) (claudecode.HookJSONOutput, error) {
		if in, ok := input.(map[string]any); ok {
			calls = append(calls, in["tool_name"].(string))
		} else {
			calls = append(calls, "?")
		}
		deny, reason := "deny", "blocked by the go hook"
		return claudecode.HookJSONOutput{HookSpecificOutput: map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": deny, "permissionDecisionReason": reason,
		}}, nil
	}
	withClient(t, f, func(ctx context.Context, c claudecode.Client) {
		turn(ctx, t, c, "Write the file")
	}, claudecode.WithPermissionMode(claudecode.PermissionModeAcceptEdits), claudecode.WithPreToolUseHook("Write", hook))
	if len(calls) != 1 {
		t.Errorf("hook calls: %q", calls)
	}
	if got := f.ReadFile("a.txt"); got != "<absent>" {
		t.Errorf("the blocked write happened: %q", got)
	}
	tr := f.ToolResult(1, "toolu_w1")
	if !tr.IsError || !strings.Contains(tr.Text, "blocked by the go hook") {
		t.Errorf("tool result = %+v", tr)
	}
}

func TestSetPermissionMode(t *testing.T) {
	f := fixture.New(t, fixture.WriteScript)
	var asked []string
	canUse := func(_ context.Context, name string, _ map[string]any, _ claudecode.ToolPermissionContext) (claudecode.PermissionResult, error) {
		asked = append(asked, name)
		return claudecode.NewPermissionResultDeny("the host was asked"), nil
	}
	withClient(t, f, func(ctx context.Context, c claudecode.Client) {
		if err := c.SetPermissionMode(ctx, claudecode.PermissionModeAcceptEdits); err != nil {
			t.Fatalf("set_permission_mode: %v", err)
		}
		turn(ctx, t, c, "Write the file")
	}, claudecode.WithCanUseTool(canUse))
	if len(asked) != 0 {
		t.Errorf("acceptEdits still asked the host: %q", asked)
	}
	if got := f.ReadFile("a.txt"); got != "original" {
		t.Errorf("a.txt = %q", got)
	}
	if tr := f.ToolResult(1, "toolu_w1"); tr.IsError {
		t.Errorf("tool result = %+v", tr)
	}
}

func TestSDKMCPServerTool(t *testing.T) {
	f := fixture.New(t, map[string]any{
		"replies": []any{
			map[string]any{"tool_use": map[string]any{"id": "toolu_m1", "name": "mcp__util__shout", "input": map[string]any{"word": "quiet"}}},
			map[string]any{"text": "shouted"},
		},
		"side": fixture.Side,
	})
	var calls []any
	shout := claudecode.NewTool("shout", "Upper-cases a word", map[string]any{
		"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}, "required": []string{"word"},
	}, func(_ context.Context, args map[string]any) (*claudecode.McpToolResult, error) {
		calls = append(calls, args["word"])
		return &claudecode.McpToolResult{Content: []claudecode.McpContent{{Type: "text", Text: "SHOUTED: " + strings.ToUpper(args["word"].(string))}}}, nil
	})
	var msgs []claudecode.Message
	withClient(t, f, func(ctx context.Context, c claudecode.Client) {
		msgs = turn(ctx, t, c, "Shout quiet")
	}, claudecode.WithSdkMcpServer("util", claudecode.CreateSDKMcpServer("util", "1.0.0", shout)), claudecode.WithAllowedTools("mcp__util__shout"))
	if diff := cmp.Diff([]any{"quiet"}, calls); diff != "" {
		t.Errorf("handler calls (-want +got):\n%s", diff)
	}
	if tr := f.ToolResult(1, "toolu_m1"); tr.IsError || fixture.Plain(tr.Text) != "SHOUTED: QUIET" {
		t.Errorf("tool result = %+v", tr)
	}
	if got := resultText(t, msgs); got != "shouted" {
		t.Errorf("result = %q", got)
	}
}

func TestStructuredOutput(t *testing.T) {
	f := fixture.New(t, map[string]any{
		"replies": []any{
			map[string]any{"tool_use": map[string]any{"id": "toolu_s1", "name": "StructuredOutput", "input": map[string]any{"answer": "forty-two", "confidence": 0.9}}},
			map[string]any{"text": "ok"},
		},
		"side": fixture.Side,
	})
	schema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"answer": map[string]any{"type": "string"}, "confidence": map[string]any{"type": "number"}},
		"required":   []string{"answer", "confidence"},
	}
	msgs := query(t, f, "answer in JSON", claudecode.WithJSONSchema(schema))
	rs := results(msgs)
	if len(rs) == 0 {
		t.Fatal("no result")
	}
	want := map[string]any{"answer": "forty-two", "confidence": 0.9}
	if diff := cmp.Diff(want, rs[len(rs)-1].StructuredOutput); diff != "" {
		t.Errorf("structured_output (-want +got):\n%s", diff)
	}
}

func TestResume(t *testing.T) {
	f := fixture.New(t, fixture.Texts("first answer", "second answer"))
	first := results(query(t, f, "first question"))
	if len(first) == 0 {
		t.Fatal("no first result")
	}
	sid := first[len(first)-1].SessionID
	second := query(t, f, "second question", claudecode.WithResume(sid))
	if got := resultText(t, second); got != "second answer" {
		t.Errorf("result = %q", got)
	}
	if rs := results(second); rs[len(rs)-1].SessionID != sid {
		t.Errorf("session %q, want %q", rs[len(rs)-1].SessionID, sid)
	}
	reqs := f.MainRequests()
	want := []string{"user: first question", "assistant: first answer", "user: second question"}
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if diff := cmp.Diff(want, reqs[1].Texts()); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
}
