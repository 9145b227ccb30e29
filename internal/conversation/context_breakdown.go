package conversation

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/agentloop/agentloop/model"
)

// MessageBreakdown is agentloop.MessageBreakdown as the session reads it; the fields are
// documented there.
type MessageBreakdown struct {
	ToolCallTokens         int64              `json:"toolCallTokens"`
	ToolResultTokens       int64              `json:"toolResultTokens"`
	AttachmentTokens       int64              `json:"attachmentTokens"`
	AssistantMessageTokens int64              `json:"assistantMessageTokens"`
	UserMessageTokens      int64              `json:"userMessageTokens"`
	ToolCallsByType        []ToolCallTokens   `json:"toolCallsByType"`
	AttachmentsByType      []AttachmentTokens `json:"attachmentsByType"`
}

// ToolCallTokens is agentloop.ToolCallTokens as the session reads it; the fields are
// documented there.
type ToolCallTokens struct {
	Name         string `json:"name"`
	CallTokens   int64  `json:"callTokens"`
	ResultTokens int64  `json:"resultTokens"`
}

// AttachmentTokens is agentloop.AttachmentTokens as the session reads it; the fields are
// documented there.
type AttachmentTokens struct {
	Name   string `json:"name"`
	Tokens int64  `json:"tokens"`
}

// Attachment kinds of MessageBreakdown.AttachmentsByType.
const (
	AttachmentImage    = "image"
	AttachmentDocument = "document"
	AttachmentContext  = "context"
)

// breakdownMessages computes the breakdown of msgs. A user text block equal
// to memory (the CLAUDE.md block) is skipped; a tool result whose call is
// not in msgs (cut off by compaction) is counted under the tool name
// "unknown".
func breakdownMessages(msgs []model.Message, memory string) *MessageBreakdown {
	b := &MessageBreakdown{ToolCallsByType: []ToolCallTokens{}, AttachmentsByType: []AttachmentTokens{}}
	toolOf := map[string]string{} // tool_use id → tool name
	byTool := map[string]*ToolCallTokens{}
	var toolOrder []string
	tool := func(name string) *ToolCallTokens {
		t := byTool[name]
		if t == nil {
			t = &ToolCallTokens{Name: name}
			byTool[name] = t
			toolOrder = append(toolOrder, name)
		}
		return t
	}
	byKind := map[string]int64{}
	for _, m := range msgs {
		for _, c := range m.Content {
			n := blockTokens(c)
			switch {
			case c.Type == model.TypeToolUse || c.Type == model.TypeServerToolUse:
				toolOf[c.ID] = c.Name
				b.ToolCallTokens += n
				tool(c.Name).CallTokens += n
			case c.Type == model.TypeToolResult || strings.HasSuffix(c.Type, "_tool_result"):
				name, ok := toolOf[c.ToolUseID]
				if !ok {
					name = "unknown"
				}
				b.ToolResultTokens += n
				tool(name).ResultTokens += n
			case m.Role == "assistant":
				b.AssistantMessageTokens += n
			case c.Type == model.TypeText && memory != "" && c.Text == memory:
				// memory_files
			case c.Type == model.TypeText && strings.HasPrefix(strings.TrimSpace(c.Text), "<system-reminder>"):
				b.AttachmentTokens += n
				byKind[AttachmentContext] += n
			case c.Type == model.TypeImage:
				b.AttachmentTokens += n
				byKind[AttachmentImage] += n
			case c.Type == model.TypeDocument:
				b.AttachmentTokens += n
				byKind[AttachmentDocument] += n
			default:
				b.UserMessageTokens += n
			}
		}
	}
	for _, name := range toolOrder {
		b.ToolCallsByType = append(b.ToolCallsByType, *byTool[name])
	}
	sort.SliceStable(b.ToolCallsByType, func(i, j int) bool {
		x, y := b.ToolCallsByType[i], b.ToolCallsByType[j]
		return x.CallTokens+x.ResultTokens > y.CallTokens+y.ResultTokens
	})
	for _, k := range []string{AttachmentImage, AttachmentDocument, AttachmentContext} {
		if byKind[k] > 0 {
			b.AttachmentsByType = append(b.AttachmentsByType, AttachmentTokens{Name: k, Tokens: byKind[k]})
		}
	}
	sort.SliceStable(b.AttachmentsByType, func(i, j int) bool { return b.AttachmentsByType[i].Tokens > b.AttachmentsByType[j].Tokens })
	return b
}

// blockTokens estimates one block: a quarter of its JSON, at least 1.
func blockTokens(c model.Content) int64 {
	j, err := json.Marshal(c)
	if err != nil {
		return max(int64(len(c.Text)+len(c.Input))/4, 1)
	}
	return max(int64(len(j))/4, 1)
}
