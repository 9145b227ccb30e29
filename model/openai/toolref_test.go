package openai

import (
	"testing"

	"github.com/agentloop/agentloop/model"
)

// TestToolResultReferences: a tool_result of tool_reference blocks (a
// ToolSearch result made for the Messages API) reaches the model as text
// naming the loaded tools.
func TestToolResultReferences(t *testing.T) {
	b := model.Content{Type: model.TypeToolResult, ToolUseID: "t", Blocks: []model.Content{
		model.ToolReference("mcp__s__a"), model.ToolReference("mcp__s__b"),
	}}
	text, images := toolResult(b)
	if want := "Loaded tool: mcp__s__a\nLoaded tool: mcp__s__b"; text != want || len(images) != 0 {
		t.Errorf("toolResult = %q, %v; want %q and no parts", text, images, want)
	}
}
