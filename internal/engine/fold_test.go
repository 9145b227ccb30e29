package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Folding: between tool rounds the run takes the host's queued messages;
// each joins the tool results' user turn, is recorded and emitted with its
// id, and the next reply names them. A hook may block one (dropped, the
// host told) or halt the run; nothing folds where no request follows, nor
// into a subagent's run.
func TestFoldQueuedPrompts(t *testing.T) {
	call := func(id string) *model.Response {
		return &model.Response{ID: "m_" + id, Model: "claude-opus-5-5", StopReason: "tool_use", Content: []model.Content{
			{Type: model.TypeToolUse, ID: id, Name: "step", Input: json.RawMessage(`{}`)}}}
	}
	done := &model.Response{ID: "m_done", Model: "claude-opus-5-5", StopReason: "end_turn",
		Content: []model.Content{model.TextBlock("done")}}
	result := func(id string) model.Content {
		return model.Content{Type: model.TypeToolResult, ToolUseID: id, Text: "ran"}
	}
	text := model.TextBlock
	for _, tc := range []struct {
		name     string
		queue    [][]FoldedPrompt // what Take hands out at each tool round
		hook     func(prompt string) PromptVerdict
		maxTurns int
		subagent bool
		// want: the last user message of each request after the first,
		// the ids each reply's assistant messages carry, the ids Blocked
		// heard of, the number of Take calls that answered none, the
		// result's terminal reason and num_turns.
		wantLast     [][]model.Content
		wantUUIDs    [][]string
		wantBlocked  []string
		wantTakes    int
		wantTerminal string
		wantTurns    int
	}{
		{name: "two folded after round one", queue: [][]FoldedPrompt{
			{{ID: "u1", Blocks: []model.Content{text("also this")}}, {ID: "u2", Blocks: []model.Content{text("and that")}}}},
			wantLast: [][]model.Content{
				{result("a"), text("also this"), text("and that")},
				{result("b")},
			},
			wantUUIDs: [][]string{nil, {"u1", "u2"}, nil}, wantTakes: 2, wantTerminal: "completed", wantTurns: 5},
		{name: "one per round", queue: [][]FoldedPrompt{
			{{ID: "u1", Blocks: []model.Content{text("first")}}}, {{ID: "u2", Blocks: []model.Content{text("second")}}}},
			wantLast:  [][]model.Content{{result("a"), text("first")}, {result("b"), text("second")}},
			wantUUIDs: [][]string{nil, {"u1"}, {"u2"}}, wantTakes: 2, wantTerminal: "completed", wantTurns: 5},
		{name: "hook context follows, a blocked one is dropped", queue: [][]FoldedPrompt{
			{{ID: "u1", Blocks: []model.Content{text("keep")}}, {ID: "u2", Blocks: []model.Content{text("drop")}}}},
			hook: func(p string) PromptVerdict {
				if p == "drop" {
					return PromptVerdict{Blocked: true, Reason: "no"}
				}
				return PromptVerdict{Context: []string{"ctx for " + p}}
			},
			wantLast: [][]model.Content{
				{result("a"), text("keep"), text(reminder("ctx for keep"))},
				{result("b")},
			},
			wantUUIDs: [][]string{nil, {"u1"}, nil}, wantBlocked: []string{"u2"}, wantTakes: 2,
			wantTerminal: "completed", wantTurns: 4},
		{name: "a halting hook ends the run", queue: [][]FoldedPrompt{
			{{ID: "u1", Blocks: []model.Content{text("stop here")}}}},
			hook: func(p string) PromptVerdict {
				if p == "stop here" {
					return PromptVerdict{Halt: &Halt{Reason: "halted"}}
				}
				return PromptVerdict{}
			},
			wantUUIDs: [][]string{nil}, wantTakes: 0, wantTerminal: "hook_stopped", wantTurns: 2},
		{name: "max turns ends the run before a fold", maxTurns: 1, queue: [][]FoldedPrompt{
			{{ID: "u1", Blocks: []model.Content{text("late")}}}},
			wantUUIDs: [][]string{nil}, wantTakes: 0, wantTerminal: "max_turns", wantTurns: 2},
		{name: "a subagent does not fold", subagent: true, queue: [][]FoldedPrompt{
			{{ID: "u1", Blocks: []model.Content{text("not for you")}}}},
			wantLast:  [][]model.Content{{result("a")}, {result("b")}},
			wantUUIDs: [][]string{nil, nil, nil}, wantTakes: 0, wantTerminal: "completed", wantTurns: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step := tool.New("step", "Step.", func(ctx context.Context, in struct{}, c *tool.Call) (tool.Result, error) {
				return tool.Text("ran"), nil
			}, nil)
			p := &scripted{replies: []*model.Response{call("a"), call("b"), done}}
			var recs []message.Message
			cfg := Config{Provider: p, Model: "claude-opus-5-5", Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"},
				Tools: []tool.Tool{step}, MaxTurns: tc.maxTurns, Record: func(m message.Message) { recs = append(recs, m) }}
			if tc.hook != nil {
				cfg.Hooks.PromptSubmit = func(_ context.Context, prompt string) PromptVerdict {
					if prompt == "go" {
						return PromptVerdict{}
					}
					return tc.hook(prompt)
				}
			}
			if tc.subagent {
				parent := "toolu_parent"
				cfg.ParentToolUseID = &parent
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			round, empty := 0, 0
			var blocked []string
			ctx := WithFold(context.Background(), Fold{
				Take: func() (FoldedPrompt, bool) {
					if round < len(tc.queue) && len(tc.queue[round]) > 0 {
						f := tc.queue[round][0]
						tc.queue[round] = tc.queue[round][1:]
						return f, true
					}
					round++
					empty++
					return FoldedPrompt{}, false
				},
				Blocked: func(id, _ string) { blocked = append(blocked, id) },
			})
			var emitted []message.Message
			res, err := s.Run(ctx, []model.Content{text("go")}, func(m message.Message) bool {
				emitted = append(emitted, m)
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.TerminalReason != tc.wantTerminal || res.NumTurns != tc.wantTurns {
				t.Errorf("result: terminal %q, num_turns %d; want %q, %d", res.TerminalReason, res.NumTurns, tc.wantTerminal, tc.wantTurns)
			}
			var last [][]model.Content
			for _, q := range p.reqs[1:] {
				last = append(last, q.Messages[len(q.Messages)-1].Content)
			}
			noCache := cmpopts.IgnoreFields(model.Content{}, "CacheControl") // the request's breakpoints
			if diff := cmp.Diff(tc.wantLast, last, noCache); diff != "" {
				t.Errorf("last user message of the requests after the first (-want +got):\n%s", diff)
			}
			var uuids [][]string
			for _, m := range emitted {
				if a, ok := m.(*message.Assistant); ok {
					uuids = append(uuids, a.UserMessageUUIDs)
				}
			}
			if diff := cmp.Diff(tc.wantUUIDs, uuids); diff != "" {
				t.Errorf("user_message_uuids of each reply (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBlocked, blocked); diff != "" {
				t.Errorf("blocked (-want +got):\n%s", diff)
			}
			if empty != tc.wantTakes {
				t.Errorf("Take answered none %d times, want %d (once per tool round that a request follows)", empty, tc.wantTakes)
			}
			// Each folded message is emitted as a user line with its id,
			// after the tool result and before the next reply.
			var order []string
			for _, m := range emitted {
				switch m := m.(type) {
				case *message.User:
					if strings.HasPrefix(m.UUID, "u") && len(m.UUID) == 2 {
						order = append(order, m.UUID)
					} else {
						order = append(order, "result")
					}
				case *message.Assistant:
					order = append(order, "reply")
				}
			}
			var want []string
			for i, ids := range tc.wantUUIDs {
				if i > 0 {
					want = append(want, "result")
				}
				want = append(want, ids...)
				want = append(want, "reply")
			}
			if tc.wantTerminal == "max_turns" || tc.wantTerminal == "hook_stopped" {
				want = append(want, "result")
			}
			if diff := cmp.Diff(want, order); diff != "" {
				t.Errorf("stream order (-want +got):\n%s", diff)
			}
			h := s.History()
			if diff := cmp.Diff(h, rebuild(recs)); diff != "" {
				t.Errorf("history (-) and record (+) differ:\n%s", diff)
			}
			if err := agentlooptest.ValidateHistory(append(h, model.Message{Role: "user", Content: []model.Content{text("next")}})); err != nil {
				t.Errorf("the next request would be rejected: %v", err)
			}
		})
	}
}
