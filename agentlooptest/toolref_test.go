package agentlooptest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

// Each rule of ValidateToolReferences, and a valid request that passes.
func TestValidateToolReferences(t *testing.T) {
	search := model.Content{Type: model.TypeToolUse, ID: "t1", Name: "ToolSearch", Input: json.RawMessage(`{}`)}
	refs := func(names ...string) model.Content {
		r := model.Content{Type: model.TypeToolResult, ToolUseID: "t1", Blocks: []model.Content{}}
		for _, n := range names {
			r.Blocks = append(r.Blocks, model.ToolReference(n))
		}
		return r
	}
	tools := []model.ToolDef{{Name: "ToolSearch"}, {Name: "mcp__s__a", DeferLoading: true}}
	for _, c := range []struct {
		name string
		msgs []model.Message
		want string
	}{
		{"declared tool", []model.Message{user(text("go")), asst(search), user(refs("mcp__s__a"), text("Tool loaded."))}, ""},
		{"undeclared tool", []model.Message{user(text("go")), asst(search), user(refs("mcp__s__a", "mcp__s__b"))},
			"Tool reference 'mcp__s__b' not found in available tools"},
		{"outside a tool_result", []model.Message{user(text("go"), model.ToolReference("mcp__s__a"))},
			"messages.0.content.1: tool_reference blocks are only accepted inside the content of a tool_result block"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := agentlooptest.ValidateToolReferences(&model.Request{Tools: tools, Messages: c.msgs})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// A request whose tool_reference names a tool it does not declare gets
// the API's 400 and is recorded as a mismatch, like an invalid history.
func TestUndeclaredToolReferenceGets400(t *testing.T) {
	s := agentlooptest.NewServer(agentlooptest.Text("scripted"))
	defer s.Close()
	body := request(false, "x")
	body["tools"] = []any{map[string]any{"name": "ToolSearch", "input_schema": map[string]any{"type": "object"}}}
	body["messages"] = []any{
		map[string]any{"role": "user", "content": "go"},
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": map[string]any{}}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1",
			"content": []any{map[string]any{"type": "tool_reference", "tool_name": "mcp__s__a"}}}}},
	}
	resp := post(t, s.URL+"/v1/messages", body)
	raw := readAll(t, resp)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400; body %s", resp.StatusCode, raw)
	}
	want := map[string]any{
		"type":       "error",
		"error":      map[string]any{"type": "invalid_request_error", "message": "Tool reference 'mcp__s__a' not found in available tools"},
		"request_id": resp.Header.Get("request-id"),
	}
	if diff := cmp.Diff(want, decode(t, raw)); diff != "" {
		t.Errorf("error body (-want +got):\n%s", diff)
	}
	if n := len(s.Mismatches()); n != 1 {
		t.Errorf("%d mismatches, want 1", n)
	}

	body["tools"] = []any{
		map[string]any{"name": "ToolSearch", "input_schema": map[string]any{"type": "object"}},
		map[string]any{"name": "mcp__s__a", "input_schema": map[string]any{"type": "object"}, "defer_loading": true},
	}
	resp = post(t, s.URL+"/v1/messages", body)
	if raw := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Errorf("declared: status %d, body %s", resp.StatusCode, raw)
	}
}
