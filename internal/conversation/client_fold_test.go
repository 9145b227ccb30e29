package conversation_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// blockSummary is "type:text" (or "tool_result:id") for each block, for
// comparing what a request sent.
func blockSummary(blocks []model.Content) []string {
	var out []string
	for _, b := range blocks {
		switch b.Type {
		case model.TypeToolResult:
			out = append(out, "tool_result:"+b.ToolUseID)
		case model.TypeText:
			out = append(out, "text:"+b.Text)
		default:
			out = append(out, b.Type)
		}
	}
	return out
}

// A message of priority next sent while a tool runs folds into the running
// turn: the next request carries it after the tool results (with the
// context UserPromptSubmit added), the stream yields it as a user message
// with its uuid, the next reply names it, and the turn ends with one
// result. A message the hook blocks is dropped and reported; a later one
// waits and runs as its own turn. The transcript gives back the history the
// client holds.
func TestFoldIntoRunningTurn(t *testing.T) {
	var mu sync.Mutex
	var submitted []string
	opts := &agentloop.Options{Hooks: map[hooks.Event][]hooks.Matcher{
		hooks.UserPromptSubmit: {{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			p := in.(hooks.UserPromptSubmitInput).Prompt
			mu.Lock()
			submitted = append(submitted, p)
			mu.Unlock()
			if p == "drop me" {
				return hooks.Output{Decision: "block", Reason: "not this one"}, nil
			}
			return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{
				HookEventName: hooks.UserPromptSubmit, AdditionalContext: "seen: " + p}}, nil
		}}}},
	}}
	env := newStreamEnv(t, opts,
		agentlooptest.ToolUse("toolu_1", "hold", map[string]any{}),
		agentlooptest.ToolUse("toolu_2", "hold", map[string]any{}),
		agentlooptest.ToolUse("toolu_3", "quick", map[string]any{}),
		agentlooptest.Text("done"),
		agentlooptest.Text("later answer"))
	env.srv.Route(func(r *agentlooptest.Request) bool { return strings.Contains(r.LastUserText(), "again") },
		agentlooptest.Text("fork ok"), agentlooptest.Text("client ok"))
	env.send(t, agentloop.UserInput{Text: "first"})
	r := consume(env.c)
	defer r.stop(t)

	waitFor(t, env.started, "the first tool to start")
	folded := env.send(t, agentloop.UserInput{Text: "fold me"})
	dropped := env.send(t, agentloop.UserInput{Text: "drop me"})
	later := env.send(t, agentloop.UserInput{Text: "afterwards", Priority: agentloop.PriorityLater})
	env.release <- struct{}{}

	waitFor(t, env.started, "the second tool to start")
	if diff := cmp.Diff([]string{later}, env.c.Queued()); diff != "" {
		t.Errorf("queued once folded (-want +got):\n%s", diff)
	}
	if env.c.Withdraw(folded) {
		t.Error("Withdraw of a folded message reported it queued")
	}
	env.release <- struct{}{}

	res, seen := r.result(t)
	if res.IsError || res.Text() != "done" {
		t.Fatalf("the turn: %s %q %v", res.Subtype, res.Text(), res.Errors)
	}
	// The stream: the folded message as a user line with its uuid, the
	// next reply naming it, the replies after that naming nothing.
	var users []string
	var named [][]string
	var diags []string
	for _, m := range seen {
		switch m := m.(type) {
		case *agentloop.UserMessage:
			if m.UUID == folded || m.UUID == dropped {
				users = append(users, m.UUID)
			}
		case *agentloop.AssistantMessage:
			named = append(named, m.UserMessageUUIDs)
		}
		if d, ok := agentloop.DiagnosticOf(m); ok {
			diags = append(diags, d.Text)
		}
	}
	if diff := cmp.Diff([]string{folded}, users); diff != "" {
		t.Errorf("user lines yielded for the sent messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{nil, {folded}, nil, nil}, named); diff != "" {
		t.Errorf("user_message_uuids of the replies (-want +got):\n%s", diff)
	}
	if !slices.ContainsFunc(diags, func(s string) bool { return strings.Contains(s, dropped) && strings.Contains(s, "not this one") }) {
		t.Errorf("no diagnostic names the blocked message %s: %q", dropped, diags)
	}
	reqs := env.srv.Requests()
	want := []string{"tool_result:toolu_1", "text:fold me", "text:<system-reminder>\nseen: fold me\n</system-reminder>"}
	if diff := cmp.Diff(want, blockSummary(reqs[1].LastUserMessage().Content)); diff != "" {
		t.Errorf("the request after the first tool round ends with (-want +got):\n%s", diff)
	}

	res, _ = r.result(t)
	if res.IsError || res.Text() != "later answer" {
		t.Fatalf("the later message's turn: %s %q %v", res.Subtype, res.Text(), res.Errors)
	}
	if got := env.srv.Requests()[4].LastUserText(); !strings.HasPrefix(got, "afterwards") {
		t.Errorf("the later message's turn sent %q", got)
	}
	mu.Lock()
	if diff := cmp.Diff([]string{"first", "fold me", "drop me", "afterwards"}, submitted); diff != "" {
		t.Errorf("UserPromptSubmit saw (-want +got):\n%s", diff)
	}
	mu.Unlock()

	// The transcript on disk gives back the history in memory.
	r.stop(t)
	fork := *opts
	fork.Resume, fork.ForkSession, fork.Hooks = env.c.SessionID(), true, nil
	if _, err := agentloop.Query(context.Background(), "again", &fork).Result(); err != nil {
		t.Fatalf("a fork of the transcript on disk: %v", err)
	}
	if _, err := env.c.Query(context.Background(), "again").Result(); err != nil {
		t.Fatalf("the client's next query: %v", err)
	}
	reqs = env.srv.Requests()
	// Up to the "again" prompt (which only the client's hook adds to).
	disk, mem := reqs[len(reqs)-2].Params.Messages, reqs[len(reqs)-1].Params.Messages
	disk, mem = disk[:len(disk)-1], mem[:len(mem)-1]
	if diff := cmp.Diff(disk, mem, cmpopts.IgnoreFields(model.Content{}, "CacheControl"), cmp.Transformer("json", func(r json.RawMessage) any {
		var v any
		_ = json.Unmarshal(r, &v)
		return v
	})); diff != "" {
		t.Errorf("history from the transcript (-) and in memory (+) differ:\n%s", diff)
	}
	var texts []string
	for _, m := range mem {
		for _, b := range m.Content {
			if b.Type == model.TypeText && (b.Text == "fold me" || b.Text == "drop me") {
				texts = append(texts, b.Text)
			}
		}
	}
	if diff := cmp.Diff([]string{"fold me"}, texts); diff != "" {
		t.Errorf("sent messages in the history (-want +got):\n%s", diff)
	}
}

// Only messages of priority next that ask for a model call and are not
// slash commands fold, and folding stops at the first that may not, so
// the queue's order holds: the others run after the turn, as turns of
// their own (or, with ShouldQuery false, join the history without one).
func TestFoldOnlyWhatMayFold(t *testing.T) {
	no := false
	for _, tc := range []struct {
		name string
		sent []agentloop.UserInput
		// the texts the request after the tool round adds after the
		// tool result, and the requests' last user texts after the turn
		wantFolded []string
		wantAfter  []string
	}{
		{name: "later", sent: []agentloop.UserInput{{Text: "wait", Priority: agentloop.PriorityLater}},
			wantAfter: []string{"wait"}},
		{name: "slash command", sent: []agentloop.UserInput{{Text: "/nosuch thing"}},
			wantAfter: []string{"/nosuch thing"}},
		{name: "should query false, and the next one behind it", sent: []agentloop.UserInput{
			{Text: "a note", ShouldQuery: &no}, {Text: "behind"}},
			wantAfter: []string{"a note\nbehind"}},
		{name: "next, then a slash command, then next", sent: []agentloop.UserInput{
			{Text: "one"}, {Text: "/nosuch"}, {Text: "two"}},
			wantFolded: []string{"one"}, wantAfter: []string{"/nosuch", "two"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newStreamEnv(t, nil, agentlooptest.ToolUse("toolu_1", "hold", map[string]any{}), agentlooptest.Text("done"))
			env.srv.SetRouter(func(q *agentlooptest.Request) (agentlooptest.Reply, bool) {
				if len(q.Params.Messages) > 3 { // a turn after the first
					return agentlooptest.Text("re: " + q.LastUserText()), true
				}
				return agentlooptest.Reply{}, false
			})
			env.send(t, agentloop.UserInput{Text: "first"})
			r := consume(env.c)
			defer r.stop(t)
			waitFor(t, env.started, "the tool to start")
			for _, in := range tc.sent {
				env.send(t, in)
			}
			env.release <- struct{}{}
			if res, _ := r.result(t); res.IsError || res.Text() != "done" {
				t.Fatalf("the turn: %s %q %v", res.Subtype, res.Text(), res.Errors)
			}
			var folded []string
			for _, b := range env.srv.Requests()[1].LastUserMessage().Content {
				if b.Type == model.TypeText {
					folded = append(folded, b.Text)
				}
			}
			if diff := cmp.Diff(tc.wantFolded, folded); diff != "" {
				t.Errorf("folded (-want +got):\n%s", diff)
			}
			var after []string
			for range tc.wantAfter {
				res, _ := r.result(t)
				after = append(after, strings.TrimPrefix(res.Text(), "re: "))
			}
			if diff := cmp.Diff(tc.wantAfter, after); diff != "" {
				t.Errorf("turns after the first (-want +got):\n%s", diff)
			}
		})
	}
}

// Once folded, a message is no longer queued: Interrupt does not list it
// as still queued, and it stays in the history of the interrupted turn,
// which the next turn sends.
func TestFoldedThenInterrupted(t *testing.T) {
	env := newStreamEnv(t, nil,
		agentlooptest.ToolUse("toolu_1", "hold", map[string]any{}),
		agentlooptest.ToolUse("toolu_2", "hold", map[string]any{}),
		agentlooptest.Text("after"))
	env.send(t, agentloop.UserInput{Text: "first"})
	r := consume(env.c)
	defer r.stop(t)
	waitFor(t, env.started, "the first tool to start")
	folded := env.send(t, agentloop.UserInput{Text: "fold me"})
	later := env.send(t, agentloop.UserInput{Text: "afterwards", Priority: agentloop.PriorityLater})
	env.release <- struct{}{}
	waitFor(t, env.started, "the second tool to start")
	got, err := env.c.Interrupt(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(agentloop.InterruptResult{StillQueued: []string{later}}, got); diff != "" {
		t.Errorf("Interrupt (-want +got):\n%s", diff)
	}
	if res, _ := r.result(t); res.TerminalReason != "aborted_tools" {
		t.Errorf("interrupted turn: %s %q", res.Subtype, res.TerminalReason)
	}
	if res, _ := r.result(t); res.IsError || res.Text() != "after" {
		t.Fatalf("the later message's turn: %s %q %v", res.Subtype, res.Text(), res.Errors)
	}
	if env.c.Withdraw(folded) {
		t.Error("Withdraw of a folded message reported it queued")
	}
	reqs := env.srv.Requests()
	msgs := reqs[len(reqs)-1].Params.Messages
	if err := agentlooptest.ValidateHistory(msgs); err != nil {
		t.Errorf("the next turn's history: %v", err)
	}
	var sent []string
	for _, m := range msgs {
		if m.Role == "user" {
			sent = append(sent, blockSummary(m.Content)...)
		}
	}
	want := []string{"text:first", "tool_result:toolu_1", "text:fold me", "tool_result:toolu_2",
		"text:" + engine.Interrupted + "\n", "text:afterwards"}
	if diff := cmp.Diff(want, sent); diff != "" {
		t.Errorf("user blocks of the next turn's request (-want +got):\n%s", diff)
	}
}
