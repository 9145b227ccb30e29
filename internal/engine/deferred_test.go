package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// A deferred call stays pending across the end of a run, in history and
// record alike; the next run settles it before its prompt, whatever the
// authoriser says then, and every request stays valid.
func TestDeferredCallSettledByNextRun(t *testing.T) {
	reply := func(calls ...string) *model.Response {
		r := &model.Response{ID: "m1", Model: "claude-opus-5-5", StopReason: "tool_use",
			Content: []model.Content{model.TextBlock("calling")}}
		for _, id := range calls {
			r.Content = append(r.Content, model.Content{Type: model.TypeToolUse, ID: id, Name: "step", Input: json.RawMessage(`{"n":1}`)})
		}
		return r
	}
	done := &model.Response{ID: "m2", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("done")}}
	for _, tc := range []struct {
		name     string
		second   Decision // the authoriser's answer in the second run
		cancel   bool     // the second run is cancelled before it starts
		dropTool bool     // the second run's session has no step tool
		wantText string   // the pending call's result after the second run; "" none
		wantTerm string   // the second run's terminal_reason
		requests int      // model requests in all
	}{
		{name: "allowed", second: Decision{Allow: true}, wantText: "ran", wantTerm: message.TerminalCompleted, requests: 2},
		{name: "denied", second: Decision{Message: "no"}, wantText: "no", wantTerm: message.TerminalCompleted, requests: 2},
		{name: "deferred again", second: Decision{Defer: true}, wantTerm: message.TerminalToolDeferred, requests: 1},
		{name: "cancelled", second: Decision{Allow: true}, cancel: true, wantText: RejectedText, wantTerm: message.TerminalAborted, requests: 1},
		{name: "tool gone", second: Decision{Allow: true}, dropTool: true,
			wantText: "<tool_use_error>The deferred step call (a) cannot be resumed: the session has no tool named step.</tool_use_error>",
			wantTerm: message.TerminalToolDeferredUnavailable, requests: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := 0
			step := tool.New("step", "Step.", func(ctx context.Context, in struct {
				N int `json:"n"`
			}, c *tool.Call) (tool.Result, error) {
				ran++
				return tool.Text("ran"), nil
			}, nil)
			other := tool.New("other", "Other.", func(ctx context.Context, in struct{}, c *tool.Call) (tool.Result, error) {
				return tool.Text("x"), nil
			}, nil)
			p := &scripted{replies: []*model.Response{reply("a"), done}}
			var recs []message.Message
			var dec Decision
			authorize := func(ctx context.Context, call *ToolCall) Decision {
				if !call.Alone {
					t.Errorf("call %s is not Alone", call.ID)
				}
				return dec
			}
			cfg := Config{Provider: p, Model: "claude-opus-5-5", Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"},
				Tools: []tool.Tool{step}, Authorize: authorize, Record: func(m message.Message) { recs = append(recs, m) }}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dec = Decision{Defer: true}
			res, err := s.Run(context.Background(), []model.Content{model.TextBlock("go")}, func(message.Message) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			if res.TerminalReason != message.TerminalToolDeferred || res.StopReason == nil || *res.StopReason != "tool_deferred" ||
				res.DeferredToolUse == nil || res.DeferredToolUse.ID != "a" || string(res.DeferredToolUse.Input) != `{"n":1}` {
				t.Fatalf("first result = %+v, want tool_deferred for a", res)
			}
			if got := s.PendingCalls(); len(got) != 1 || got[0].ID != "a" {
				t.Fatalf("pending calls = %+v, want a", got)
			}
			if diff := cmp.Diff(s.History(), rebuild(recs)); diff != "" {
				t.Errorf("after the deferral, history (-) and record (+) differ:\n%s", diff)
			}
			if tc.dropTool {
				h := s.History()
				cfg.Tools = []tool.Tool{other}
				if s, err = New(cfg); err != nil {
					t.Fatal(err)
				}
				s.SetHistory(h)
			}
			dec = tc.second
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			}
			defer cancel()
			res, _ = s.Run(ctx, []model.Content{model.TextBlock("next")}, func(message.Message) bool { return true })
			if res == nil || res.TerminalReason != tc.wantTerm {
				t.Fatalf("second result = %+v, want terminal_reason %s", res, tc.wantTerm)
			}
			if len(p.reqs) != tc.requests {
				t.Errorf("%d requests, want %d", len(p.reqs), tc.requests)
			}
			for i, req := range p.reqs {
				if err := agentlooptest.ValidateHistory(req.Messages); err != nil {
					t.Errorf("request %d is invalid: %v", i, err)
				}
			}
			if tc.requests == 2 {
				last := p.reqs[1].Messages[len(p.reqs[1].Messages)-1]
				if len(last.Content) != 2 || last.Content[0].ToolUseID != "a" || last.Content[1].Text != "next" {
					t.Errorf("second request's user turn = %+v, want the result of a, then the prompt", last.Content)
				}
			}
			h := s.History()
			if !tc.dropTool {
				if diff := cmp.Diff(h, rebuild(recs)); diff != "" {
					t.Errorf("history (-) and record (+) differ:\n%s", diff)
				}
			}
			got := ""
			for _, m := range h {
				for _, b := range m.Content {
					if b.Type == model.TypeToolResult && b.ToolUseID == "a" {
						got = b.ResultText()
					}
				}
			}
			if got != tc.wantText {
				t.Errorf("result of the pending call = %q, want %q", got, tc.wantText)
			}
			if wantRan := map[bool]int{true: 1}[tc.wantText == "ran"]; ran != wantRan {
				t.Errorf("the tool ran %d times, want %d", ran, wantRan)
			}
			if tc.wantText != "" {
				next := append(h, model.Message{Role: "user", Content: []model.Content{model.TextBlock("more")}})
				if err := agentlooptest.ValidateHistory(next); err != nil {
					t.Errorf("the next request would be rejected: %v", err)
				}
			}
		})
	}
}

// A defer on one of several calls is a denial.
func TestDeferWithSeveralCallsDenies(t *testing.T) {
	step := tool.New("step", "Step.", func(ctx context.Context, in struct{}, c *tool.Call) (tool.Result, error) {
		return tool.Text("ran"), nil
	}, nil)
	r := &model.Response{ID: "m1", Model: "claude-opus-5-5", StopReason: "tool_use", Content: []model.Content{
		{Type: model.TypeToolUse, ID: "a", Name: "step", Input: json.RawMessage(`{}`)},
		{Type: model.TypeToolUse, ID: "b", Name: "step", Input: json.RawMessage(`{}`)}}}
	done := &model.Response{ID: "m2", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("ok")}}
	p := &scripted{replies: []*model.Response{r, done}}
	s, err := New(Config{Provider: p, Model: "claude-opus-5-5", Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"}, Tools: []tool.Tool{step},
		Authorize: func(ctx context.Context, call *ToolCall) Decision {
			return Decision{Defer: true, Message: "deferred, denied"}
		}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), []model.Content{model.TextBlock("go")}, func(message.Message) bool { return true })
	if err != nil || res.DeferredToolUse != nil || len(res.PermissionDenials) != 2 {
		t.Fatalf("result = %+v, %v; want two denials and no deferral", res, err)
	}
	for _, id := range []string{"a", "b"} {
		if got := p.reqs[1].Messages[2]; got.Role != "user" {
			t.Fatalf("request 2 = %+v", p.reqs[1].Messages)
		}
		found := false
		for _, b := range p.reqs[1].Messages[2].Content {
			found = found || (b.ToolUseID == id && b.ResultText() == "deferred, denied")
		}
		if !found {
			t.Errorf("no denial for %s in %+v", id, p.reqs[1].Messages[2].Content)
		}
	}
}
