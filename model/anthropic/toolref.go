package anthropic

import "github.com/agentloop/agentloop/model"

var _ model.ToolReferencer = (*Provider)(nil)

// ToolReferences reports whether the provider's API loads deferred tools
// itself (tools declared with defer_loading, tool_result blocks of
// tool_reference blocks, under the beta model.ToolSearchBeta, which the
// caller lists in Request.Betas). It does for Anthropic's own Messages
// API: the Anthropic platform at Anthropic's address or a loopback one
// (a local gateway or fake, as the reference counts it). Bedrock, Vertex
// and other gateways are not known to, and get the text form.
func (p *Provider) ToolReferences() bool { return p.toolRefs }

var _ model.SealedSender = (*Provider)(nil)

// SendsSealed reports that the provider sends sealed tool results
// ([model.Seal]) from their JSON: a session's history keeps large results
// once, and the provider's encoded history shares those bytes.
func (p *Provider) SendsSealed() bool { return true }
