package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// TestFanoutReplacesGoroutines: with Config.Fanout set, the read-only calls
// of a reply run through it (here: one at a time, last call first, as a
// deterministic scheduler might) and their results reach the model in the
// order it completes them. A state-changing call is not handed to it as
// part of a batch.
func TestFanoutReplacesGoroutines(t *testing.T) {
	var ran []string
	mk := func(name string, readOnly bool) tool.Tool {
		return tool.New(name, name+".", func(ctx context.Context, in struct{}, c *tool.Call) (tool.Result, error) {
			ran = append(ran, c.ID)
			return tool.Result{Content: []model.Content{model.TextBlock(name + " done")}}, nil
		}, &tool.Options{ReadOnly: readOnly})
	}
	call := func(id, name string) model.Content {
		return model.Content{Type: model.TypeToolUse, ID: id, Name: name, Input: []byte(`{}`)}
	}
	p := &scripted{replies: []*model.Response{
		{Content: []model.Content{call("c1", "r1"), call("c2", "r2"), call("c3", "w")}, StopReason: "tool_use"},
		{Content: []model.Content{model.TextBlock("ok")}, StopReason: "end_turn"},
	}}
	var batches [][]int
	s, err := New(Config{Provider: p, Model: "claude-opus-5-5", Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"},
		Tools: []tool.Tool{mk("r1", true), mk("r2", true), mk("w", false)},
		Fanout: func(jobs []func() any, done func(any)) {
			batches = append(batches, []int{len(jobs)})
			for _, job := range slices.Backward(jobs) {
				done(job())
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), []model.Content{model.TextBlock("go")}, func(message.Message) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"c2", "c1", "c3"}, ran); d != "" {
		t.Errorf("calls ran (-want +got):\n%s", d)
	}
	if d := cmp.Diff([][]int{{2}, {1}}, batches); d != "" {
		t.Errorf("batches handed to Fanout (-want +got):\n%s", d)
	}
	var ids []string
	for _, b := range p.reqs[1].Messages[len(p.reqs[1].Messages)-1].Content {
		if b.Type == model.TypeToolResult {
			ids = append(ids, b.ToolUseID)
		}
	}
	if d := cmp.Diff([]string{"c2", "c1", "c3"}, ids); d != "" {
		t.Errorf("tool results sent back (-want +got):\n%s", d)
	}
}
