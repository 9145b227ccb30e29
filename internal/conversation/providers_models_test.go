package conversation_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// requestShape is the part of a request that thinking and effort decide.
type requestShape struct {
	Thinking string
	Output   string
}

func shapeOf(r *agentlooptest.Request) requestShape {
	return requestShape{Thinking: string(r.Field("thinking")), Output: string(r.Field("output_config"))}
}

func TestEffortAndThinkingRequestShape(t *testing.T) {
	cases := []struct {
		name string
		opts agentloop.Options
		want requestShape
	}{
		{"default on a current model: adaptive thinking, no effort", agentloop.Options{Model: "opus"},
			requestShape{Thinking: `{"type":"adaptive"}`}},
		{"effort is sent where supported", agentloop.Options{Model: "sonnet", Effort: "high"},
			requestShape{Thinking: `{"type":"adaptive"}`, Output: `{"effort":"high"}`}},
		{"budgeted thinking", agentloop.Options{Model: "haiku", MaxThinkingTokens: 4096},
			requestShape{Thinking: `{"type":"enabled","budget_tokens":4096}`}},
		{"display omitted", agentloop.Options{Model: "fable", Thinking: &agentloop.ThinkingConfig{Type: "adaptive", Display: "omitted"}},
			requestShape{Thinking: `{"type":"adaptive","display":"omitted"}`}},
		{"disabled", agentloop.Options{Model: "opus", Thinking: &agentloop.ThinkingConfig{Type: "disabled"}},
			requestShape{Thinking: `{"type":"disabled"}`}},
		{"model without effort or adaptive thinking", agentloop.Options{Model: "claude-sonnet-4-5", Effort: "max",
			Thinking: &agentloop.ThinkingConfig{Type: "adaptive"}}, requestShape{}},
		{"model without thinking at all", agentloop.Options{Model: "claude-3-5-haiku", MaxThinkingTokens: 2048, Effort: "low"},
			requestShape{}},
		{"model with budgeted thinking only", agentloop.Options{Model: "claude-haiku-4-5", MaxThinkingTokens: 2048},
			requestShape{Thinking: `{"type":"enabled","budget_tokens":2048}`}},
		{"unknown model: explicit settings as given, no defaults", agentloop.Options{Model: "claude-next-9", Effort: "low"},
			requestShape{Output: `{"effort":"low"}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			opts := tc.opts
			opts.Provider, opts.Cwd, opts.Tools = provider(t, srv, nil), t.TempDir(), []string{}
			if _, err := agentloop.Query(context.Background(), "hi", &opts).Result(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, shapeOf(srv.LastRequest())); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThinkingRoundTrip(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.Thinking("Let me check.", agentlooptest.ToolUse("toolu_1", "echo", map[string]any{"text": "x"})),
		agentlooptest.Text("done"))
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}, CustomTools: testTools(nil)}
	msgs, err := agentloop.Query(context.Background(), "hi", opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	first := msgs[1].(*agentloop.AssistantMessage).Message.Content[0]
	sent := srv.Requests()[1].Params.Messages[1].Content[0]
	if first.Type != "thinking" || first.Signature == "" || sent.Thinking != first.Thinking || sent.Signature != first.Signature {
		t.Errorf("thinking streamed %+v, sent back %+v", first, sent)
	}
}

func TestClientSettingsMidSession(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"), agentlooptest.Text("three"))
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Query(ctx, "first").Result(); err != nil {
		t.Fatal(err)
	}
	c.SetModel("sonnet")
	if err := c.SetMaxThinkingTokens(2048); err != nil {
		t.Fatal(err)
	}
	res, err := c.Query(ctx, "second").Result()
	if err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[1]
	if req.Params.Model != "claude-sonnet-5-5" || string(req.Field("thinking")) != `{"type":"enabled","budget_tokens":2048}` {
		t.Errorf("second request: model %s thinking %s", req.Params.Model, req.Field("thinking"))
	}
	if len(req.Params.Messages) != 3 || req.Params.Messages[1].Content[0].Text != "one" {
		t.Errorf("second request does not continue the history: %+v", req.Params.Messages)
	}
	if _, ok := res.ModelUsage["claude-opus-5-5"]; !ok || len(res.ModelUsage) != 2 {
		t.Errorf("modelUsage keeps models apart across turns: %v", keys(res.ModelUsage))
	}
	if err := c.SetMaxThinkingTokens(10); err == nil {
		t.Error("a budget below 1024 was accepted")
	}
	if err := c.SetEffort("extreme"); err == nil {
		t.Error("an unknown effort was accepted")
	}
	c.Close()
	if _, err := c.Query(ctx, "third").Result(); err != agentloop.ErrClosed {
		t.Errorf("query after Close: %v", err)
	}
}

// After a turn served by the fallback model, the next turn tries the main
// model first.
func TestFallbackThenMainAgain(t *testing.T) {
	o := agentlooptest.Overloaded()
	srv := agentlooptest.NewTB(t, o, o, o, agentlooptest.ToolUse("toolu_1", "echo", map[string]any{"text": "x"}),
		agentlooptest.Text("main again"))
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{},
		CustomTools: testTools(nil), FallbackModels: []string{"haiku"}}
	res, err := agentloop.Query(context.Background(), "hi", opts).Result()
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, r := range srv.Requests() {
		models = append(models, r.Params.Model)
	}
	want := []string{"claude-opus-5-5", "claude-opus-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-opus-5-5"}
	if diff := cmp.Diff(want, models); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	if len(res.ModelUsage) != 2 {
		t.Errorf("modelUsage = %v", keys(res.ModelUsage))
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

var _ = json.Marshal
