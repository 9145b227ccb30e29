package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

func namedTool(name, text string) tool.Tool {
	return tool.New(name, "The "+name+" tool.", func(ctx context.Context, in struct{}, c *tool.Call) (tool.Result, error) {
		return tool.Text(text), nil
	}, nil)
}

// TestReplaceToolsAtNextRequest: a change queued while a tool runs waits
// for the next request (the batch finishes with the old set); a call of
// the removed tool in the next reply gets an is_error result, so the
// history stays valid.
func TestReplaceToolsAtNextRequest(t *testing.T) {
	call := func(id, name string) *model.Response {
		return &model.Response{ID: "m_" + id, Model: "claude-opus-5-5", StopReason: "tool_use",
			Content: []model.Content{{Type: model.TypeToolUse, ID: id, Name: name, Input: json.RawMessage(`{}`)}}}
	}
	done := &model.Response{ID: "m_done", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("done")}}
	p := &scripted{replies: []*model.Response{call("t1", "a"), call("t2", "a"), done}}
	var s *Session
	a := tool.New("a", "The a tool.", func(ctx context.Context, in struct{}, c *tool.Call) (tool.Result, error) {
		if err := s.ReplaceTools([]string{"a"}, []tool.Tool{namedTool("c", "c ran"), namedTool("b", "new b")}); err != nil {
			t.Error(err)
		}
		return tool.Text("a ran"), nil
	}, nil)
	s = newSession(t, p, a, namedTool("b", "old b"))
	if _, err := s.Run(context.Background(), []model.Content{model.TextBlock("go")}, func(message.Message) bool { return true }); err != nil {
		t.Fatal(err)
	}
	var declared [][]string
	for _, r := range p.reqs {
		var names []string
		for _, d := range r.Tools {
			names = append(names, d.Name)
		}
		declared = append(declared, names)
	}
	want := [][]string{{"a", "b"}, {"b", "c"}, {"b", "c"}}
	if diff := cmp.Diff(want, declared); diff != "" {
		t.Errorf("declared tools (-want +got):\n%s", diff)
	}
	results := map[string]model.Content{}
	for _, m := range s.History() {
		for _, b := range m.Content {
			if b.Type == model.TypeToolResult {
				results[b.ToolUseID] = b
			}
		}
	}
	if r := results["t1"]; r.Text != "a ran" {
		t.Errorf("t1 (the batch that queued the change) = %+v, want a ran", r)
	}
	if r := results["t2"]; r.IsError == nil || !*r.IsError || !strings.Contains(r.Text, "a") {
		t.Errorf("t2 (a call of the removed tool) = %+v, want is_error", r)
	}
}

func TestReplaceToolsRejectsBadTools(t *testing.T) {
	s := newSession(t, &scripted{}, namedTool("a", "x"))
	for name, add := range map[string][]tool.Tool{
		"nil tool":  {nil},
		"duplicate": {namedTool("b", "1"), namedTool("b", "2")},
	} {
		if err := s.ReplaceTools(nil, add); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	s.applyToolChanges()
	if diff := cmp.Diff([]string{"a"}, s.ToolNames()); diff != "" {
		t.Errorf("a rejected change was applied (-want +got):\n%s", diff)
	}
}
