package agentlooptest

import (
	"fmt"

	"github.com/agentloop/agentloop/model"
)

// ValidateToolReferences checks the tool_reference blocks of a request
// (the API's tool search, beta model.ToolSearchBeta) by the rules the
// Messages API enforces, and returns an error whose text is the API's
// message for the first rule broken, or nil. The server applies it with
// [ValidateHistory], and answers a request that breaks it the same way.
//
//  1. A tool_reference block names a tool the request declares in tools
//     (the API's message: "Tool reference 'NAME' not found in available
//     tools").
//  2. A tool_reference block sits inside a tool_result's content, never
//     directly in a message (this message is agentloop's wording).
func ValidateToolReferences(p *model.Request) error {
	declared := make(map[string]bool, len(p.Tools))
	for _, t := range p.Tools {
		declared[t.Name] = true
	}
	for i, m := range p.Messages {
		for j, b := range m.Content {
			if b.Type == model.TypeToolReference {
				return fmt.Errorf("messages.%d.content.%d: tool_reference blocks are only accepted inside the content of a tool_result block", i, j)
			}
			if b.Type != model.TypeToolResult {
				continue
			}
			for _, inner := range b.Blocks {
				if inner.Type == model.TypeToolReference && !declared[inner.ToolName] {
					return fmt.Errorf("Tool reference '%s' not found in available tools", inner.ToolName)
				}
			}
		}
	}
	return nil
}
