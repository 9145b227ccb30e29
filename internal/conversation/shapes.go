// Package conversation runs the live session behind agentloop's Query and
// Client: it resolves a Config (settings, providers, permissions, hooks,
// sandbox, plugins, MCP servers, subagents) into a running engine, keeps
// the transcript and the session store in step with it, and answers the
// Client's controls. It holds its own copies of the root package's shapes
// (Config for Options, AgentDefinition, PermissionRequest, …); the root's
// wiring.go converts between them, so nothing here imports the root.
package conversation

import (
	"encoding/json"

	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/tool"
)

// Version is agentloop's version, as system/init reports it.
const Version = "0.1.0"

// The stream's message types, by their names in the root package.
type (
	Message       = message.Message
	ResultMessage = message.Result
	Tool          = tool.Tool
)

// OutputFormat asks for structured output (agentloop.OutputFormat).
type OutputFormat struct {
	Type   string
	Schema json.RawMessage
}

// ThinkingEnabled is the thinking type that takes a budget.
const ThinkingEnabled = string(vocab.ThinkingEnabled)

// ParsePermissionMode parses a permission mode, "manual" included.
func ParsePermissionMode(s string) (PermissionMode, error) {
	m, err := vocab.ParsePermissionMode(s)
	return PermissionMode(m), err
}

// ParseEffort parses an effort level.
func ParseEffort(s string) (string, error) {
	e, err := vocab.ParseEffort(s)
	return string(e), err
}

// ParseThinkingType parses a thinking type.
func ParseThinkingType(s string) (string, error) {
	t, err := vocab.ParseThinkingType(s)
	return string(t), err
}

// ParseThinkingDisplay parses a thinking display.
func ParseThinkingDisplay(s string) (string, error) {
	d, err := vocab.ParseThinkingDisplay(s)
	return string(d), err
}

// effortError is why e is not an effort level, nil when it is one.
func effortError(e string) error {
	_, err := ParseEffort(e)
	return err
}
