package subagent

import (
	"github.com/agentloop/agentloop/internal/vocab"

	"github.com/agentloop/agentloop/internal/lazy"
)

// Definition is one kind of subagent the model may start through the Agent
// tool: agentloop.AgentDefinition as this package reads it (the root
// converts one into the other; the fields are documented there).
type Definition struct {
	Description            string               `json:"description"`
	Prompt                 string               `json:"prompt"`
	Tools                  []string             `json:"tools,omitempty"`
	DisallowedTools        []string             `json:"disallowedTools,omitempty"`
	Model                  string               `json:"model,omitempty"`
	Effort                 string               `json:"effort,omitempty"`
	MaxTurns               int                  `json:"maxTurns,omitempty"`
	PermissionMode         vocab.PermissionMode `json:"permissionMode,omitempty"`
	Skills                 []string             `json:"skills,omitempty"`
	Background             bool                 `json:"background,omitempty"`
	OmitClaudeMd           bool                 `json:"omitClaudeMd,omitempty"`
	CriticalSystemReminder string               `json:"criticalSystemReminder_EXPERIMENTAL,omitempty"`
	AutoCompactWindow      int                  `json:"autoCompactWindow,omitempty"`
	MCPServers             []any                `json:"mcpServers,omitempty"`
	InitialPrompt          string               `json:"initialPrompt,omitempty"`
	Memory                 string               `json:"memory,omitempty"`
}

// GeneralPurpose is the agent used when the model names none.
const GeneralPurpose = "general-purpose"

// MaxDepth is how many layers of subagents may nest below the main loop;
// the bottom layer has no Agent tool.
const MaxDepth = 3

// generalPurpose is the built-in agent every session offers unless its
// caller defines one of that name.
var generalPurpose = Definition{
	Description: "A general agent for research and multi-step tasks that benefit from a fresh context.",
	Prompt: "You are a subagent working on one task delegated by another agent. Do the task with the tools you have, " +
		"then reply with a concise report of what you found or did; your last message is handed back as the result.",
}

var builtinOnce lazy.Value[map[string]Definition] // the value of builtin, made at its first use

// builtin returns what Definitions returns when nothing is defined. It is
// shared by all such sessions: nobody writes to it.
func builtin() map[string]Definition {
	return builtinOnce.Get(func() map[string]Definition { return map[string]Definition{GeneralPurpose: generalPurpose} })
}

// Definitions merges the agents a session offers: general-purpose, then
// each layer in order (later layers win on a name). The result may be
// shared between sessions: callers only read it.
func Definitions(layers ...map[string]Definition) map[string]Definition {
	n := 0
	for _, l := range layers {
		n += len(l)
	}
	if n == 0 {
		return builtin()
	}
	out := map[string]Definition{GeneralPurpose: generalPurpose}
	for _, l := range layers {
		for k, v := range l {
			out[k] = v
		}
	}
	return out
}

// isBuiltIn reports whether d is agentloop's general-purpose agent, not
// one of the caller's (which may take its name).
func isBuiltIn(d Definition) bool {
	return d.Prompt == generalPurpose.Prompt && d.Description == generalPurpose.Description
}
