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

// rebuild turns recorded messages back into a history, as a transcript read
// back does: user and assistant lines in order, same roles merged.
func rebuild(recs []message.Message) []model.Message {
	var out []model.Message
	add := func(role string, blocks []model.Content) {
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(append([]model.Content(nil), out[n-1].Content...), blocks...)
			return
		}
		out = append(out, model.Message{Role: role, Content: append([]model.Content(nil), blocks...)})
	}
	for _, m := range recs {
		switch m := m.(type) {
		case *message.User:
			add("user", m.Message.Content)
		case *message.Assistant:
			if m.Message.Model != "<synthetic>" {
				add("assistant", m.Message.Content)
			}
		}
	}
	return out
}

// Whatever ends a run, the recorded messages rebuild exactly the history
// the session holds, and that history (with a next prompt) is one the API
// accepts.
func TestRecordMatchesHistoryOnEveryExit(t *testing.T) {
	calls := func() *model.Response {
		return &model.Response{ID: "m1", Model: "claude-opus-5-5", StopReason: "tool_use", Content: []model.Content{
			model.TextBlock("two calls"), model.TextBlock(""),
			{Type: model.TypeToolUse, ID: "a", Name: "step", Input: json.RawMessage(`{}`)},
			{Type: model.TypeToolUse, ID: "b", Name: "step", Input: json.RawMessage(`{}`)},
		}}
	}
	for _, tc := range []struct {
		name    string
		cancel  bool // the first call cancels the run
		stop    bool // the consumer stops at the first tool result
		budget  bool // the reply spends the budget
		wantErr bool
		want    map[string]string // result text by tool_use id
	}{
		{name: "cancelled by the first call", cancel: true, wantErr: true,
			want: map[string]string{"a": "ran", "b": RejectedText}},
		{name: "consumer stops at the first result", stop: true, wantErr: true,
			want: map[string]string{"a": "ran", "b": Interrupted}},
		{name: "budget", budget: true,
			want: map[string]string{"a": budgetUnrun(0.01), "b": budgetUnrun(0.01)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			step := tool.New("step", "Step.", func(ctx context.Context, in struct{}, c *tool.Call) (tool.Result, error) {
				if tc.cancel {
					cancel()
				}
				return tool.Text("ran"), nil
			}, nil)
			resp := calls()
			if tc.budget {
				resp.Usage = model.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}
			}
			var recs []message.Message
			s, err := New(Config{Provider: &scripted{replies: []*model.Response{resp}}, Model: "claude-opus-5-5",
				Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"}, Tools: []tool.Tool{step},
				MaxBudgetUSD: map[bool]float64{true: 0.01}[tc.budget],
				Record:       func(m message.Message) { recs = append(recs, m) }})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Run(ctx, []model.Content{model.TextBlock("go")}, func(m message.Message) bool {
				_, isUser := m.(*message.User)
				return !(tc.stop && isUser)
			})
			if (err != nil) != tc.wantErr {
				t.Errorf("Run error = %v, want error: %v", err, tc.wantErr)
			}
			h := s.History()
			if diff := cmp.Diff(h, rebuild(recs)); diff != "" {
				t.Errorf("history (-) and record (+) differ:\n%s", diff)
			}
			next := append(h, model.Message{Role: "user", Content: []model.Content{model.TextBlock("next")}})
			if err := agentlooptest.ValidateHistory(next); err != nil {
				t.Errorf("the next request would be rejected: %v", err)
			}
			got := map[string]string{}
			for _, m := range h {
				for _, b := range m.Content {
					if b.Type == model.TypeToolResult {
						got[b.ToolUseID] = b.ResultText()
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tool results (-want +got):\n%s", diff)
			}
			if _, ok := recs[len(recs)-1].(*message.Result); !ok {
				t.Errorf("the last recorded message is %T, want the result", recs[len(recs)-1])
			}
		})
	}
}
