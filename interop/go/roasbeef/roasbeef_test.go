// Package roasbeef runs github.com/roasbeef/claude-agent-sdk-go against
// agentloop, given as the CLI path.
package roasbeef

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	claudeagent "github.com/roasbeef/claude-agent-sdk-go"

	"github.com/agentloop/agentloop/interop/go/internal/fixture"
)

// client is a connected client for the fixture, closed when the test ends.
//
// This client registers its wait for the initialize answer only after it
// has written the request, so an engine that answers within microseconds
// (agentloop does; the reference takes far longer to start) can have the
// answer dropped and Connect time out. A connect that times out is tried
// once more, with a fresh engine, and logged.
func client(t *testing.T, f *fixture.Fixture, extra ...claudeagent.Option) *claudeagent.Client {
	t.Helper()
	opts := append([]claudeagent.Option{
		claudeagent.WithCLIPath(fixture.Engine(t)),
		claudeagent.WithCwd(f.Cwd),
		claudeagent.WithEnv(f.Env()),
	}, extra...)
	for attempt := 1; ; attempt++ {
		c, err := claudeagent.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = c.Connect(ctx)
		cancel()
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		_ = c.Close()
		if attempt == 2 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("connect: %v", err)
		}
		t.Logf("connect timed out (the client's initialize race); trying again: %v", err)
	}
}

// turn sends prompt and reads up to its result.
func turn(t *testing.T, c *claudeagent.Client, prompt string) []claudeagent.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fixture.Timeout)
	defer cancel()
	var out []claudeagent.Message
	for m := range c.Query(ctx, prompt) {
		out = append(out, m)
	}
	if ctx.Err() != nil {
		t.Fatalf("the turn did not end: %v", ctx.Err())
	}
	return out
}

func result(t *testing.T, msgs []claudeagent.Message) claudeagent.ResultMessage {
	t.Helper()
	for i := len(msgs) - 1; i >= 0; i-- {
		if r, ok := msgs[i].(claudeagent.ResultMessage); ok {
			return r
		}
	}
	t.Fatalf("no result among %d messages", len(msgs))
	return claudeagent.ResultMessage{}
}

func TestOneShotQuery(t *testing.T) {
	f := fixture.New(t, fixture.Texts("Hello from the script."))
	msgs := turn(t, client(t, f), "Say hello")
	if r := result(t, msgs); r.Subtype != "success" || r.Result != "Hello from the script." {
		t.Errorf("result = %+v", r)
	}
	var text []string
	for _, m := range msgs {
		if a, ok := m.(claudeagent.AssistantMessage); ok {
			text = append(text, a.ContentText())
		}
	}
	if got := strings.Join(text, "\n"); got != "Hello from the script." {
		t.Errorf("assistant text = %q", got)
	}
	if reqs := f.MainRequests(); len(reqs) != 1 || !slices.Equal(reqs[0].Texts(), []string{"user: Say hello"}) {
		t.Errorf("requests: %+v", reqs)
	}
}

func TestMultiTurnClient(t *testing.T) {
	f := fixture.New(t, fixture.Texts("The word is PAPAYA.", "You said PAPAYA."))
	c := client(t, f)
	got := []string{result(t, turn(t, c, "Remember the word")).Result, result(t, turn(t, c, "What was the word?")).Result}
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

// TestInterrupt: the interrupt control request ends the turn; as the
// reference, the session goes on with the interrupted prompt kept once,
// followed by the interruption marker, and not asked again.
func TestInterrupt(t *testing.T) {
	f := fixture.New(t, map[string]any{
		"replies": []any{map[string]any{"text": "slow", "delay_ms": 15000}, map[string]any{"text": "after the interrupt"}},
		"side":    fixture.Side,
	})
	c := client(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), fixture.Timeout)
	defer cancel()
	s, err := c.Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Send(ctx, "take your time"); err != nil {
		t.Fatal(err)
	}
	var rs []claudeagent.ResultMessage
	marker := false
	interrupted := false
	for m := range s.Messages() {
		if !interrupted && len(f.MainRequests()) == 0 {
			f.WaitMainRequests(1)
		}
		if !interrupted {
			interrupted = true
			if err := s.Interrupt(ctx); err != nil {
				t.Fatalf("interrupt: %v", err)
			}
		}
		switch m := m.(type) {
		case claudeagent.UserMessage:
			for _, b := range m.Message.Content {
				if strings.Contains(b.Text, "[Request interrupted by user]") {
					marker = true
				}
			}
		case claudeagent.ResultMessage:
			rs = append(rs, m)
			if len(rs) == 1 {
				if err := s.Send(ctx, "are you there?"); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(rs) == 2 {
			break
		}
	}
	if len(rs) != 2 {
		t.Fatalf("%d results: %+v", len(rs), rs)
	}
	if rs[0].Subtype != "error_during_execution" || rs[1].Result != "after the interrupt" {
		t.Errorf("results: %q %q / %q", rs[0].Subtype, rs[0].Result, rs[1].Result)
	}
	if !marker {
		t.Error("no user message with the interruption marker")
	}
	reqs := f.MainRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	want := []string{"user: take your time", "user: [Request interrupted by user]", "user: are you there?"}
	if diff := cmp.Diff(want, reqs[1].Texts()); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
}

func TestCanUseToolAllow(t *testing.T) {
	f := fixture.New(t, fixture.WriteScript)
	var asked []string
	canUse := func(_ context.Context, req claudeagent.ToolPermissionRequest) claudeagent.PermissionResult {
		var in struct {
			Content string `json:"content"`
		}
		_ = json.Unmarshal(req.Arguments, &in)
		asked = append(asked, req.ToolName+":"+in.Content)
		return claudeagent.PermissionAllow{}
	}
	msgs := turn(t, client(t, f, claudeagent.WithCanUseTool(canUse)), "Write the file")
	if diff := cmp.Diff([]string{"Write:original"}, asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	if got := f.ReadFile("a.txt"); got != "original" {
		t.Errorf("a.txt = %q", got)
	}
	if r := result(t, msgs); r.Result != "done" {
		t.Errorf("result = %+v", r)
	}
}

func TestCanUseToolDeny(t *testing.T) {
	f := fixture.New(t, fixture.WriteScript)
	canUse := func(context.Context, claudeagent.ToolPermissionRequest) claudeagent.PermissionResult {
		return claudeagent.PermissionDeny{Reason: "not today, scripted"}
	}
	turn(t, client(t, f, claudeagent.WithCanUseTool(canUse)), "Write the file")
	if got := f.ReadFile("a.txt"); got != "<absent>" {
		t.Errorf("the denied write happened: %q", got)
	}
	if tr := f.ToolResult(1, "toolu_w1"); !tr.IsError || !strings.Contains(tr.Text, "not today, scripted") {
		t.Errorf("tool result = %+v", tr)
	}
}

func TestPreToolUseHookBlocks(t *testing.T) {
	f := fixture.New(t, fixture.WriteScript)
	var calls []string
	hook := func(_ context.Context, in claudeagent.HookInput) (claudeagent.HookResult, error) {
		if p, ok := in.(claudeagent.PreToolUseInput); ok {
			calls = append(calls, p.ToolName)
		} else if p, ok := in.(*claudeagent.PreToolUseInput); ok {
			calls = append(calls, p.ToolName)
		} else {
			calls = append(calls, "?")
		}
		return claudeagent.HookResult{Continue: true, HookSpecificOutput: map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "blocked by the go hook",
		}}, nil
	}
	turn(t, client(t, f,
		claudeagent.WithPermissionMode(claudeagent.PermissionModeAcceptEdits),
		claudeagent.WithHooks(map[claudeagent.HookType][]claudeagent.HookConfig{
			claudeagent.HookTypePreToolUse: {{Matcher: "Write", Callback: hook}},
		})), "Write the file")
	if diff := cmp.Diff([]string{"Write"}, calls); diff != "" {
		t.Errorf("hook calls (-want +got):\n%s", diff)
	}
	if got := f.ReadFile("a.txt"); got != "<absent>" {
		t.Errorf("the blocked write happened: %q", got)
	}
	if tr := f.ToolResult(1, "toolu_w1"); !tr.IsError || !strings.Contains(tr.Text, "blocked by the go hook") {
		t.Errorf("tool result = %+v", tr)
	}
}

func TestSetPermissionMode(t *testing.T) {
	f := fixture.New(t, fixture.WriteScript)
	var asked []string
	canUse := func(_ context.Context, req claudeagent.ToolPermissionRequest) claudeagent.PermissionResult {
		asked = append(asked, req.ToolName)
		return claudeagent.PermissionDeny{Reason: "the host was asked"}
	}
	c := client(t, f, claudeagent.WithCanUseTool(canUse))
	ctx, cancel := context.WithTimeout(context.Background(), fixture.Timeout)
	defer cancel()
	s, err := c.Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetPermissionMode(ctx, claudeagent.PermissionModeAcceptEdits); err != nil {
		t.Fatalf("set_permission_mode: %v", err)
	}
	if err := s.Send(ctx, "Write the file"); err != nil {
		t.Fatal(err)
	}
	for m := range s.Messages() {
		if _, ok := m.(claudeagent.ResultMessage); ok {
			break
		}
	}
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
	type args struct {
		Word string `json:"word"`
	}
	var calls []string
	server := claudeagent.CreateMcpServer(claudeagent.McpServerOptions{Name: "util", Tools: []claudeagent.ToolRegistrar{
		// With an input schema: the reference drops a server whose
		// tools/list has a tool without one (Tool gives none).
		claudeagent.ToolWithSchema("shout", "Upper-cases a word", map[string]any{
			"type": "object", "properties": map[string]any{"word": map[string]any{"type": "string"}}, "required": []string{"word"},
		}, func(_ context.Context, a args) (claudeagent.ToolResult, error) {
			calls = append(calls, a.Word)
			return claudeagent.TextResult("SHOUTED: " + strings.ToUpper(a.Word)), nil
		}),
	}})
	// This client does not pass WithAllowedTools to the engine; the
	// host allows the call instead.
	allow := func(context.Context, claudeagent.ToolPermissionRequest) claudeagent.PermissionResult {
		return claudeagent.PermissionAllow{}
	}
	msgs := turn(t, client(t, f, claudeagent.WithMcpServer("util", server), claudeagent.WithCanUseTool(allow)), "Shout quiet")
	if diff := cmp.Diff([]string{"quiet"}, calls); diff != "" {
		t.Errorf("handler calls (-want +got):\n%s", diff)
	}
	if tr := f.ToolResult(1, "toolu_m1"); tr.IsError || fixture.Plain(tr.Text) != "SHOUTED: QUIET" {
		t.Errorf("tool result = %+v", tr)
	}
	if r := result(t, msgs); r.Result != "shouted" {
		t.Errorf("result = %+v", r)
	}
}

func TestResume(t *testing.T) {
	f := fixture.New(t, fixture.Texts("first answer", "second answer"))
	c1 := client(t, f)
	first := result(t, turn(t, c1, "first question"))
	if err := c1.Close(); err != nil {
		t.Fatal(err)
	}
	// Close does not wait for the engine to exit.
	f.WaitSessionReleased(first.SessionID)
	if first.Result != "first answer" {
		t.Fatalf("first result = %+v", first)
	}
	second := result(t, turn(t, client(t, f, claudeagent.WithResume(first.SessionID)), "second question"))
	if second.Result != "second answer" || second.SessionID != first.SessionID {
		t.Errorf("second result = %q in %q, want in %q", second.Result, second.SessionID, first.SessionID)
	}
	reqs := f.MainRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	want := []string{"user: first question", "assistant: first answer", "user: second question"}
	if diff := cmp.Diff(want, reqs[1].Texts()); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
}
