package conversation

import (
	"sort"

	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/pricing"
)

// ModelInfo is agentloop.ModelInfo as the session reads it; the fields are
// documented there.
type ModelInfo struct {
	Value                    string   `json:"value"`
	ResolvedModel            string   `json:"resolvedModel,omitempty"`
	DisplayName              string   `json:"displayName"`
	Description              string   `json:"description"`
	SupportsEffort           bool     `json:"supportsEffort,omitempty"`
	SupportedEffortLevels    []string `json:"supportedEffortLevels,omitempty"`
	SupportsAdaptiveThinking bool     `json:"supportsAdaptiveThinking,omitempty"`
}

// AgentInfo is agentloop.AgentInfo as the session reads it; the fields are
// documented there.
type AgentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Model       string `json:"model,omitempty"`
}

// SupportedModels is agentloop's Client.SupportedModels; see its doc there.
func (c *Client) SupportedModels() []ModelInfo {
	var out []ModelInfo
	for _, alias := range pricing.Aliases() {
		id := pricing.Resolve(alias)
		info := ModelInfo{Value: alias, ResolvedModel: id, DisplayName: alias, Description: "The latest " + alias + " model (" + id + ")"}
		if p, _, ok := pricing.Lookup(id); ok {
			info.SupportsEffort = p.Caps.Effort
			info.SupportsAdaptiveThinking = p.Caps.AdaptiveThinking
			if p.Caps.Effort {
				info.SupportedEffortLevels = vocab.Efforts.Strings()
			}
		}
		out = append(out, info)
	}
	return out
}

// SupportedAgents is agentloop's Client.SupportedAgents; see its doc there.
func (c *Client) SupportedAgents() []AgentInfo {
	var out []AgentInfo
	for name, def := range c.sess.agents() {
		m := def.Model
		if m == "inherit" {
			m = ""
		}
		out = append(out, AgentInfo{Name: name, Description: def.Description, Model: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
