package anthropic

import "github.com/agentloop/agentloop/model"

var _ model.ToolReferencer = (*Provider)(nil)

// ToolReferences reports that the Messages API loads deferred tools
// itself: tools declared with defer_loading and tool_result blocks of
// tool_reference blocks, under the beta model.ToolSearchBeta (the caller
// lists it in Request.Betas).
func (p *Provider) ToolReferences() bool { return true }
