package conversation

import (
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

func TestBreakdownMessages(t *testing.T) {
	const memory = "<system-reminder>\nCLAUDE.md: be brief.\n</system-reminder>"
	prompt := model.TextBlock("Fix the build.")
	mem := model.TextBlock(memory)
	hookCtx := model.TextBlock("<system-reminder>\nHook says hi.\n</system-reminder>")
	img := model.Content{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "AAAA"}}
	doc := model.Content{Type: model.TypeDocument, Source: &model.Source{Type: "text", MediaType: "text/plain", Data: "a long document text"}}
	think := model.Content{Type: model.TypeThinking, Thinking: "let me see"}
	say := model.TextBlock("I will read it.")
	read := model.Content{Type: model.TypeToolUse, ID: "t1", Name: "Read", Input: json.RawMessage(`{"file_path":"/a"}`)}
	bash := model.Content{Type: model.TypeToolUse, ID: "t2", Name: "Bash", Input: json.RawMessage(`{"command":"go build ./... && go test ./..."}`)}
	readRes := model.Content{Type: model.TypeToolResult, ToolUseID: "t1", Text: "package a\n"}
	bashRes := model.Content{Type: model.TypeToolResult, ToolUseID: "t2", Text: "ok  \tall packages passed, and a lot more output here"}
	orphan := model.Content{Type: model.TypeToolResult, ToolUseID: "gone", Text: "x"}
	n := blockTokens

	tests := []struct {
		name string
		msgs []model.Message
		want *MessageBreakdown
	}{
		{"empty", nil, &MessageBreakdown{ToolCallsByType: []ToolCallTokens{}, AttachmentsByType: []AttachmentTokens{}}},
		{
			"prompt, memory and attachments",
			[]model.Message{{Role: "user", Content: []model.Content{mem, hookCtx, img, doc, prompt}}},
			&MessageBreakdown{
				AttachmentTokens:  n(hookCtx) + n(img) + n(doc),
				UserMessageTokens: n(prompt),
				ToolCallsByType:   []ToolCallTokens{},
				AttachmentsByType: sortedAttachments(
					AttachmentTokens{AttachmentImage, n(img)},
					AttachmentTokens{AttachmentDocument, n(doc)},
					AttachmentTokens{AttachmentContext, n(hookCtx)}),
			},
		},
		{
			"tool calls by type",
			[]model.Message{
				{Role: "user", Content: []model.Content{prompt}},
				{Role: "assistant", Content: []model.Content{think, say, read, bash}},
				{Role: "user", Content: []model.Content{readRes, bashRes, hookCtx}},
				{Role: "assistant", Content: []model.Content{bash}},
				{Role: "user", Content: []model.Content{bashRes}},
			},
			&MessageBreakdown{
				ToolCallTokens:         n(read) + 2*n(bash),
				ToolResultTokens:       n(readRes) + 2*n(bashRes),
				AttachmentTokens:       n(hookCtx),
				AssistantMessageTokens: n(think) + n(say),
				UserMessageTokens:      n(prompt),
				ToolCallsByType: []ToolCallTokens{
					{Name: "Bash", CallTokens: 2 * n(bash), ResultTokens: 2 * n(bashRes)},
					{Name: "Read", CallTokens: n(read), ResultTokens: n(readRes)},
				},
				AttachmentsByType: []AttachmentTokens{{AttachmentContext, n(hookCtx)}},
			},
		},
		{
			"result whose call was compacted away",
			[]model.Message{{Role: "user", Content: []model.Content{orphan}}},
			&MessageBreakdown{
				ToolResultTokens:  n(orphan),
				ToolCallsByType:   []ToolCallTokens{{Name: "unknown", ResultTokens: n(orphan)}},
				AttachmentsByType: []AttachmentTokens{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := breakdownMessages(tt.msgs, memory)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("breakdown (-want +got):\n%s", diff)
			}
		})
	}
}

// sortedAttachments orders attachments as the breakdown does: largest
// first.
func sortedAttachments(as ...AttachmentTokens) []AttachmentTokens {
	for i := 1; i < len(as); i++ {
		for j := i; j > 0 && as[j].Tokens > as[j-1].Tokens; j-- {
			as[j], as[j-1] = as[j-1], as[j]
		}
	}
	return as
}
