package agentloop

import (
	"sort"

	"github.com/agentloop/agentloop/pricing"
)

// ModelInfo describes a model a conversation can switch to with SetModel:
// the reference's ModelInfo, as its supportedModels() returns them.
type ModelInfo struct {
	// Value is what SetModel takes: an alias.
	Value string `json:"value"`
	// ResolvedModel is the model id the alias stands for.
	ResolvedModel string `json:"resolvedModel,omitempty"`
	// DisplayName and Description are for people.
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
	// SupportsEffort: the model takes an effort level (SetEffort).
	SupportsEffort bool `json:"supportsEffort,omitempty"`
	// SupportedEffortLevels are the levels, when SupportsEffort.
	SupportedEffortLevels []string `json:"supportedEffortLevels,omitempty"`
	// SupportsAdaptiveThinking: the model thinks adaptively by default.
	SupportsAdaptiveThinking bool `json:"supportsAdaptiveThinking,omitempty"`
}

// AgentInfo describes a subagent the model can delegate to: the
// reference's AgentInfo.
type AgentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Model is the agent's model setting; empty means it inherits the
	// session's.
	Model string `json:"model,omitempty"`
}

// SupportedModels lists the model aliases SetModel (and Options.Model)
// accepts, with what each resolves to and what it supports. Any other
// model id is accepted too and sent as given.
func (c *Client) SupportedModels() []ModelInfo {
	var out []ModelInfo
	for _, alias := range pricing.Aliases() {
		id := pricing.Resolve(alias)
		info := ModelInfo{Value: alias, ResolvedModel: id, DisplayName: alias, Description: "The latest " + alias + " model (" + id + ")"}
		if p, _, ok := pricing.Lookup(id); ok {
			info.SupportsEffort = p.Caps.Effort
			info.SupportsAdaptiveThinking = p.Caps.AdaptiveThinking
			if p.Caps.Effort {
				info.SupportedEffortLevels = append([]string(nil), efforts...)
			}
		}
		out = append(out, info)
	}
	return out
}

// SupportedAgents lists the subagents of this conversation, sorted by
// name, as init's agents names them: the built-in general-purpose agent
// unless redefined, the .claude/agents files and Options.Agents.
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
