package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// TestToolContextDropsRunValues: a tool (an Agent tool starting a
// subagent's run, say) sees neither the prompt id nor the fold the host
// set for the parent's run, but does see the emitter.
func TestToolContextDropsRunValues(t *testing.T) {
	type seen struct {
		id      string
		fold    bool
		emitter bool
	}
	var got seen
	probe := tool.New("probe", "Probe.", func(ctx context.Context, _ struct{}, _ *tool.Call) (tool.Result, error) {
		_, fold := foldFrom(ctx)
		got = seen{id: promptID(ctx), fold: fold, emitter: Emitter(ctx) != nil}
		return tool.Text("ok"), nil
	}, &tool.Options{ReadOnly: true})
	p := &scripted{replies: []*model.Response{
		{ID: "m1", Model: "claude-opus-5-5", StopReason: "tool_use", Content: []model.Content{
			{Type: model.TypeToolUse, ID: "t1", Name: "probe", Input: json.RawMessage(`{}`)}}},
		{ID: "m2", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("done")}},
	}}
	s := newSession(t, p, probe)
	ctx := WithPromptID(context.Background(), "11111111-1111-4111-8111-111111111111")
	ctx = WithFold(ctx, Fold{Take: func() (FoldedPrompt, bool) { return FoldedPrompt{}, false }})
	if _, err := s.Run(ctx, []model.Content{model.TextBlock("go")}, func(message.Message) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if want := (seen{emitter: true}); got != want {
		t.Errorf("the tool saw %+v, want %+v", got, want)
	}
}
